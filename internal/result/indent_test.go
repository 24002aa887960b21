package result

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// writeIndented writes what json.MarshalIndent does, byte for byte: the
// report's documents of every kind, a merged run, and values whose
// strings hold what a scanner could take for structure.
func TestWriteIndented(t *testing.T) {
	var docs []any
	paths, err := filepath.Glob("../report/testdata/*.json")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no documents (%v)", err)
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		docs = append(docs, v)
	}
	docs = append(docs, mergedSample(t),
		map[string]any{"a": "x\\\"y,{}[]:", "b": []any{}, "c": map[string]any{}, "d": []any{map[string]any{}, []any{[]any{}}, nil, 1.5, "\\"}},
		[]any{}, "s", 0)
	for i, v := range docs {
		want, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		compact, _ := json.Marshal(v)
		var got bytes.Buffer
		if err := writeIndented(&got, compact); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), append(want, '\n')) {
			t.Errorf("document %d: writeIndented differs from json.MarshalIndent:\n%s\nvs\n%s", i, got.Bytes(), want)
		}
	}
}

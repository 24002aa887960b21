package result

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxSeed is the largest document FuzzRead starts from.
const maxSeed = 20 << 10

// FuzzRead: no document makes reading a run or a sweep panic or answer in
// more than one line, and a document that reads, written as dbrig writes
// it, reads back as itself. Seeded with the reports' documents of every
// schema, and this package's own run and merged run.
func FuzzRead(f *testing.F) {
	seeds := 0
	err := filepath.WalkDir("../report/testdata", func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || filepath.Ext(path) != ".json" {
			return err
		}
		// The documents with a run's telemetry, hundreds of KB, slow
		// the search a hundredfold and reach no code the others miss.
		if info, err := e.Info(); err != nil || info.Size() > maxSeed {
			return err
		}
		b, err := os.ReadFile(path)
		f.Add(b)
		seeds++
		return err
	})
	if err != nil || seeds == 0 {
		f.Fatalf("no documents to seed with (%v)", err)
	}
	d, err := FromRun(sampleRun())
	if err != nil {
		f.Fatal(err)
	}
	for _, d := range []*Document{d, mergedSample(f)} {
		b, err := encode(d)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := ParseRun("r.json", b)
		rereads(t, d, err, ParseRun)
		s, err := ParseSweep("s.json", b)
		rereads(t, s, err, ParseSweep)
	})
}

// rereads checks what reading a document gave: an error of one line, or
// a document that writes and reads back unchanged.
func rereads[T any](t *testing.T, doc T, err error, read func(string, []byte) (T, error)) {
	t.Helper()
	if err != nil {
		if strings.Contains(err.Error(), "\n") {
			t.Fatalf("error in more than one line: %q", err)
		}
		return
	}
	b, err := encode(doc)
	if err != nil {
		t.Fatalf("a document that reads does not write: %v", err)
	}
	back, err := read("again.json", b)
	if err != nil {
		t.Fatalf("a document as dbrig writes it does not read: %v\n%s", err, b)
	}
	again, err := encode(back)
	if err != nil || !bytes.Equal(again, b) {
		t.Fatalf("a document changes as it is written and read back (%v):\n%s\nvs\n%s", err, again, b)
	}
}

// Package catalogtest makes series of result documents for the tests of
// the catalogue and its commands: a real run's document, its throughput
// moved by the test itself.
package catalogtest

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// Template is a real tproc-c document (a PostgreSQL run with its
// telemetry), decoded, for a test to make its own series of.
func Template(t testing.TB) map[string]any { return TemplateFrom(t, "durability-run.json") }

// TemplateFrom is the report's test document name, decoded: a real run's
// (pooled-run.json is a small one, for thousands of copies).
func TemplateFrom(t testing.TB, name string) map[string]any {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(here), "../../report/testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var d map[string]any
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// Start is when the first document of a series started; the i-th starts
// i hours later.
var Start = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

// Scaled is tpl with its throughput multiplied by f (the metrics on both
// sides, and every second's completions, so that the run's own interval
// moves with it), started i hours after Start, with vus in its config.
func Scaled(t testing.TB, tpl map[string]any, f float64, i, vus int) []byte {
	t.Helper()
	var c map[string]any
	b, _ := json.Marshal(tpl)
	json.Unmarshal(b, &c)
	c["started_at"] = Start.Add(time.Duration(i) * time.Hour).Format(time.RFC3339Nano)
	c["config"].(map[string]any)["vus"] = vus
	for _, m := range c["metrics"].([]any) {
		m := m.(map[string]any)
		for _, side := range []string{"db", "client"} {
			if v, ok := m[side].(float64); ok && m["higher_is_better"] == true {
				m[side] = v * f
			}
		}
	}
	for _, p := range c["series"].([]any) {
		counts := p.(map[string]any)["counts"].([]any)
		for j, n := range counts {
			counts[j] = math.Round(n.(float64) * f)
		}
	}
	out, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Step is 30 documents of one setup, their throughput with 2% noise
// (seeded by seed) and moved by the factor step from the 20th on.
func Step(t testing.TB, step float64, seed uint64) [][]byte {
	t.Helper()
	tpl := Template(t)
	rng := rand.New(rand.NewPCG(20, seed))
	var out [][]byte
	for i := range 30 {
		f := 1 + 0.02*rng.NormFloat64()
		if i >= 19 {
			f *= step
		}
		out = append(out, Scaled(t, tpl, f, i, 8))
	}
	return out
}

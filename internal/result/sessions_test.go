package result

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/latency"
)

func TestSessionsRoundTrip(t *testing.T) {
	run := sampleRun()
	wait := latency.NewHistogram()
	for i := 1; i <= 100; i++ {
		latency.Record(wait, time.Duration(i)*time.Millisecond)
	}
	run.Result.Pool = &driver.Pool{Terminals: 30, Sessions: 3, InUseMax: 3, InUseP95: 3, QueuedMax: 27, QueuedP95: 20,
		AllInUse: 0.97, Wait: wait, Waits: []*latency.Percentiles{{P50: 40, P95: 80, P99: 90, Max: 100}}}
	d, err := FromRun(run)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "r.json")
	if err := Write(path, d); err != nil {
		t.Fatal(err)
	}
	back, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	s := back.Sessions
	if s == nil || *s != *d.Sessions || s.Terminals != 30 || s.Sessions != 3 || s.QueuedMax != 27 || s.AllInUse != 0.97 || s.Wait.P90 < 89 || s.Wait.P90 > 91 {
		t.Fatalf("sessions did not survive: %+v, wrote %+v", s, d.Sessions)
	}
	if w := back.Series[0].Wait; w == nil || w.P95 != 80 {
		t.Errorf("the second's wait = %+v, want p95 80 ms", w)
	}
	h, err := latency.Decode(s.WaitHistogram)
	if err != nil || h.TotalCount() != 100 {
		t.Errorf("wait histogram did not survive: %v, %v", err, h)
	}
	// Every session in use while terminals waited 90 ms (p90): the pool
	// was too small, and a note says so.
	if len(back.Notes) != 1 || !strings.Contains(back.Notes[0], "30 terminals need a larger pool") {
		t.Errorf("notes = %q, want the pool's verdict", back.Notes)
	}
}

func TestNoSessionsWithoutPool(t *testing.T) {
	d, err := FromRun(sampleRun())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "r.json")
	if err := Write(path, d); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if strings.Contains(string(b), `"sessions"`) {
		t.Error("a run with a session per VU wrote a sessions section")
	}
	// Documents written before the section existed read as before.
	back, err := Read(path)
	if err != nil || back.Sessions != nil || len(back.Notes) != 0 || back.Series[0].Wait != nil {
		t.Errorf("read back: %v, sessions %+v, notes %q", err, back.Sessions, back.Notes)
	}
}

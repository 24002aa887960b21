package report

import (
	"bytes"
	"fmt"
	"html"
	"strings"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/telemetry"
)

// splitDoc is testdata/run.json with change made to it, rendered as the
// HTML page and as text.
func splitDoc(t *testing.T, change func(d *result.Document)) (page, text string) {
	t.Helper()
	d, err := result.Read("testdata/run.json")
	if err != nil {
		t.Fatal(err)
	}
	change(d)
	var h, p bytes.Buffer
	if err := HTML(&h, &Doc{Path: "r.json", Run: d}); err != nil {
		t.Fatal(err)
	}
	PlainText(&p, &Doc{Path: "r.json", Run: d})
	return html.UnescapeString(h.String()), p.String()
}

// TestReportMergedRun: a merged run's report has a "Client hosts" table,
// a row a part with its host, share, edges and client CPU (from its own
// telemetry), and names a missing part.
func TestReportMergedRun(t *testing.T) {
	open := time.Date(2026, 11, 25, 18, 31, 12, 0, time.UTC)
	member := func(i int, host string, startMs float64) result.Member {
		at := open.Add(time.Duration(startMs * float64(time.Millisecond)))
		return result.Member{Host: result.Host{Hostname: host}, Part: result.Part{Index: i, Of: 3, VUs: 2, Connections: 1,
			WindowStart: at, WindowEnd: at.Add(30 * time.Second)}}
	}
	tel, err := result.Read("testdata/telemetry-run.json")
	if err != nil {
		t.Fatal(err)
	}
	cpu := fmt.Sprintf("%.1f%%", telemetry.Summarize(tel.Telemetry).Host.Client)
	page, text := splitDoc(t, func(d *result.Document) {
		d.Telemetry = nil
		d.Parts = &result.Parts{Of: 3, RunID: "7f3c1a2b", Present: []int{1, 3}, Missing: []int{2}, Marker: 1,
			Spread:  result.Spread{StartMs: 1.5, EndMs: 1.5, UncertaintyMs: 0.2},
			Members: []result.Member{member(1, "client-a", 0), member(3, "client-c", 1.5)}}
		d.Parts.Members[1].Telemetry = tel.Telemetry
	})
	for _, out := range []string{page, text} {
		for _, want := range []string{"Client hosts", "1 (marks)", "client-a", "client-c", "+0.0", "+1.5",
			"known to ±0.2 ms", "Part 2 of 3 is missing: no document", cpu} {
			if !strings.Contains(out, want) {
				t.Errorf("merged run's report lacks %q", want)
			}
		}
	}
	if !strings.Contains(page, `<section id="client-hosts">`) {
		t.Error("no client hosts section on the page")
	}
}

// TestReportPartRun: a part's own document says under its title that it
// is a share, once, and shows what the part was told.
func TestReportPartRun(t *testing.T) {
	p := result.Part{Index: 2, Of: 3, RunID: "7f3c1a2b-9d4e-4f00-8a11-0123456789ab", RunName: "dbrig", VUs: 2,
		Clock: result.PartClock{OffsetMs: 1.25, UncertaintyMs: 0.05}}
	page, text := splitDoc(t, func(d *result.Document) {
		d.Part = &p
		d.Notes = append(d.Notes, p.Note())
	})
	for _, out := range []string{page, text} {
		if n := strings.Count(out, p.Note()); n != 1 {
			t.Errorf("the part's note is in the report %d times, want once", n)
		}
		for _, want := range []string{"Part 2 of 3", "marking part", "1.250 ms ± 0.050 ms"} {
			if !strings.Contains(out, want) {
				t.Errorf("part's report lacks %q", want)
			}
		}
	}
	if !strings.HasPrefix(strings.SplitN(text, "\n", 4)[2], p.Note()) {
		t.Errorf("the note is not under the title:\n%s", text[:300])
	}
}

package result

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/dbrig/dbrig/internal/latency"
	"github.com/dbrig/dbrig/internal/telemetry"
)

// Part is a part's own document's section (--part i/n): which part of
// which split run it is, what was agreed with the others, and where its
// window's edges fell on the server's clock.
type Part struct {
	Index   int    `json:"index"`
	Of      int    `json:"of"`
	RunID   string `json:"run_id"`
	RunName string `json:"run_name"`
	Marker  bool   `json:"marker"` // took the database's marks
	// ConfigSHA256 is the hash (parts.Canonical) of what the parts agreed
	// on: the document's configuration but for its per-host keys, with
	// Agreed, the rest of it, which the configuration lacks.
	ConfigSHA256 string         `json:"config_sha256"`
	Agreed       map[string]any `json:"agreed,omitempty"`
	// VUs and Connections are this part's share of the run's.
	VUs         int          `json:"vus"`
	Connections int          `json:"connections,omitempty"`
	Schedule    PartSchedule `json:"schedule"`
	Clock       PartClock    `json:"clock"`
	// WindowStart and WindowEnd are the part's window's edges on the
	// server's clock (its own plus the offset).
	WindowStart time.Time `json:"window_start,omitempty"`
	WindowEnd   time.Time `json:"window_end,omitempty"`
	// EndFlushes is the flushes this part ran inside the marker's window,
	// at its end edge, which the marker's transaction counter holds.
	EndFlushes int64 `json:"end_flushes"`
}

// PartSchedule is the instants every part of a split run was told, on
// the server's clock: the run's clock starts at Start, the ramp-up ends
// at Open and the window closes at Close; every part stays still for
// HoldMs at each edge.
type PartSchedule struct {
	Start  time.Time `json:"start"`
	Open   time.Time `json:"open"`
	Close  time.Time `json:"close"`
	HoldMs float64   `json:"hold_ms"`
}

// PartClock is how the part's clock stood to the server's (server =
// local + offset) before the run, how well that is known, and the
// offset again after the run (its drift).
type PartClock struct {
	OffsetMs      float64 `json:"offset_ms"`
	UncertaintyMs float64 `json:"uncertainty_ms"`
	OffsetAfterMs float64 `json:"offset_after_ms"`
}

// Parts is a merged document's section (dbrig merge): which parts it
// holds, which part's marks, how far apart their windows' edges were,
// and each part's own figures that merging sums away.
type Parts struct {
	Of      int    `json:"of"`
	RunID   string `json:"run_id"`
	Present []int  `json:"present"`
	Missing []int  `json:"missing,omitempty"`
	// Marker is the part whose marks the document holds; 0: none present.
	Marker  int      `json:"marker"`
	Spread  Spread   `json:"spread"`
	Members []Member `json:"members"`
}

// Spread is how far apart the parts' window edges fell on the server's
// clock (the latest minus the earliest), and how well the parts' clocks
// were known (the largest uncertainty), in milliseconds.
type Spread struct {
	StartMs       float64 `json:"start_ms"`
	EndMs         float64 `json:"end_ms"`
	UncertaintyMs float64 `json:"uncertainty_ms"`
}

// Member is one part of a merged run, as its own document had it.
type Member struct {
	Part        Part      `json:"part"`
	Host        Host      `json:"host"`
	Interrupted bool      `json:"interrupted,omitempty"`
	Sessions    *Sessions `json:"sessions,omitempty"`
	// Telemetry is the part's own recording, its host's side; the marking
	// part's, which also holds the database's, is the merged document's
	// own Telemetry instead.
	Telemetry *telemetry.Recording `json:"telemetry,omitempty"`
}

// part makes d a part's own document: its part section, its seconds'
// histograms (so that the parts merge exactly) and a note that its
// figures are a share.
func (d *Document) part(run Run) error {
	if run.Part == nil {
		return nil
	}
	p := *run.Part
	d.Part = &p
	for k, pt := range run.Result.Series {
		var err error
		if d.Series[k].Histogram, err = encodeSome(pt.Hist); err != nil {
			return err
		}
		if d.Series[k].WaitHistogram, err = encodeSome(pt.WaitHist); err != nil {
			return err
		}
	}
	d.Notes = append(d.Notes, p.Note())
	return nil
}

// encodeSome is latency.Encode of h, and "" of no histogram.
func encodeSome(h *hdrhistogram.Histogram) (string, error) {
	if h == nil {
		return "", nil
	}
	return latency.Encode(h)
}

// Note says that a part's figures are its share of the run's: a part's
// own document holds it among its notes.
func (p Part) Note() string {
	return fmt.Sprintf("Part %d of %d of run %s: its figures are this part's share; dbrig merge makes the run's",
		p.Index, p.Of, shortID(p.RunID))
}

// shortID is a run id as people quote it: its first 8 characters.
func shortID(id string) string {
	if len(id) > 8 {
		return id[:8] + "…"
	}
	return id
}

// DefaultPartPath names a part's new document in dir as DefaultPath
// does, with the part: tproc-c-20261125T183102Z-part2of3.json.
func DefaultPartPath(dir, wl string, started time.Time, index, of int) string {
	return filepath.Join(dir, fmt.Sprintf("%s-%s-part%dof%d.json", wl, started.UTC().Format(stampLayout), index, of))
}

//go:build unix

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/dbrig/dbrig/bench/internal/harness"
	"github.com/dbrig/dbrig/internal/result"
)

// Point is one run of keyed terminals over a pool.
type Point struct {
	Terminals  int    `json:"terminals"`
	Sessions   int    `json:"sessions"`
	Warehouses int    `json:"warehouses"`
	Rampup     string `json:"rampup"`
	Duration   string `json:"duration"`
	// Through is "pgbouncer" for the run through it, else empty.
	Through string `json:"through,omitempty"`
	// Failed is the run's failure in one line, where it failed (through
	// pgbouncer); the figures are then absent.
	Failed string `json:"failed,omitempty"`

	// PeakRSS is dbrig's peak RSS; of a run in parts (--parts), the
	// largest part's, and Parts has each part's.
	PeakRSS int64       `json:"peak_rss_bytes"`
	Parts   []PartUsage `json:"parts,omitempty"`
	// RSSWindow is dbrig's VmRSS, from a 1 Hz sample, nearest the
	// window's start, its quarters and its end: flat, or growing how.
	RSSWindow []int64 `json:"rss_window_bytes"`
	// Cores is dbrig's CPU over the whole process's wall time,
	// WindowCores over the window (from the 1 Hz sample).
	WallSeconds float64 `json:"wall_seconds"`
	CPUSeconds  float64 `json:"client_cpu_seconds"`
	Cores       float64 `json:"client_cores"`
	WindowCores float64 `json:"client_cores_window"`
	// ServerSessionsMax is the most client backends of the database in a
	// 1 Hz poll of pg_stat_activity; SessionsOpened the change of
	// pg_stat_database.sessions over the run.
	ServerSessionsMax int   `json:"server_sessions_max"`
	SessionsOpened    int64 `json:"sessions_opened"`

	Efficiency float64 `json:"efficiency_pct"`
	NOPMDB     float64 `json:"nopm_db"`
	NOPMClient float64 `json:"nopm_client"`
	TPMDB      float64 `json:"tpm_db"`
	TPMClient  float64 `json:"tpm_client"`
	// NewOrderP90 and WaitP90 are the window's p90 of New-Order's
	// response time and of the wait for a session, in ms.
	NewOrderP90 float64 `json:"new_order_p90_ms"`
	WaitP90     float64 `json:"wait_p90_ms"`
	Errors      int64   `json:"errors"`
	// Verdict is the run's own verdict on what limited it, in one line.
	Verdict string `json:"verdict,omitempty"`
	// LoadBefore and LoadAfter are /proc/loadavg's three averages as the
	// point began and ended: the machine is shared.
	LoadBefore string `json:"loadavg_before"`
	LoadAfter  string `json:"loadavg_after"`
}

// point builds or reuses the point's database and runs its terminals on
// it; via, when not empty, is where dbrig connects instead (pgbouncer's).
func (b *bench) point(ctx context.Context, sh shape, n int, via string) (Point, error) {
	p := Point{Terminals: sh.terminals, Sessions: sh.sessions, Warehouses: sh.warehouses,
		Rampup: b.o.rampup.String(), Duration: b.o.duration.String()}
	url, err := b.database(ctx, sh.warehouses)
	if err != nil {
		return p, err
	}
	target := url
	if via != "" {
		p.Through, target = "pgbouncer", via
	}
	if err := harness.Checkpoint(ctx, url); err != nil {
		return p, err
	}
	poll, err := pollSessions(ctx, b.urlFor("postgres"), dbName(sh.warehouses))
	if err != nil {
		return p, err
	}
	jsonPath := filepath.Join(b.dir, fmt.Sprintf("point-%d.json", n))
	fmt.Printf("\n== %s\n", p.title())
	p.LoadBefore = loadavg()
	var samples []harness.ProcSample
	var runErr error
	if b.o.parts > 1 {
		runErr = b.runParts(ctx, sh, target, jsonPath, &p)
	} else {
		samples, runErr = b.runOne(ctx, sh, target, jsonPath, &p)
	}
	p.LoadAfter = loadavg()
	most, opened, pollErr := poll.end(ctx)
	if runErr != nil {
		return p, runErr
	}
	if pollErr != nil {
		return p, pollErr
	}
	p.ServerSessionsMax, p.SessionsOpened = most, opened
	if err := p.read(jsonPath, samples); err != nil {
		return p, err
	}
	p.print()
	return p, nil
}

// runOne runs the point's terminals in one dbrig process, sampling its
// RSS and CPU once a second.
func (b *bench) runOne(ctx context.Context, sh shape, target, jsonPath string, p *Point) ([]harness.ProcSample, error) {
	var samples []harness.ProcSample
	cmd := harness.Command(ctx, b.dbrig, b.runArgs(sh, target, jsonPath)...)
	said := &lastLine{}
	cmd.Stderr = io.MultiWriter(cmd.Stderr, said)
	u, err := harness.Watched(ctx, cmd, func(ctx context.Context, pid int) { samples = harness.SampleProc(ctx, pid, time.Second) })
	if err != nil && said.line != "" {
		err = fmt.Errorf("%w (%s)", err, said.line)
	}
	p.usage(u)
	return samples, err
}

// runArgs are dbrig's arguments for a point.
func (b *bench) runArgs(sh shape, url, jsonPath string) []string {
	return []string{"run", "tproc-c", "--target", url, "--keying-thinking",
		"--terminals-per-warehouse", strconv.Itoa(perWarehouse),
		"--vus", strconv.Itoa(sh.terminals), "--connections", strconv.Itoa(sh.sessions),
		"--rampup", b.o.rampup.String(), "--duration", b.o.duration.String(), "--json", jsonPath}
}

func (p *Point) title() string {
	via := ""
	if p.Through != "" {
		via = ", through " + p.Through
	}
	return fmt.Sprintf("%s terminals on %d sessions, %d warehouses (%d a warehouse)%s: %s ramp-up, %s window",
		thousands(p.Terminals), p.Sessions, p.Warehouses, perWarehouse, via, p.Rampup, p.Duration)
}

// usage keeps what the process used.
func (p *Point) usage(u harness.Usage) {
	p.PeakRSS, p.WallSeconds, p.CPUSeconds = u.PeakRSS, u.Wall.Seconds(), u.CPU.Seconds()
	p.Cores = p.CPUSeconds / p.WallSeconds
}

// read takes the run's figures from its document, and the window's RSS
// and CPU from the samples.
func (p *Point) read(jsonPath string, samples []harness.ProcSample) error {
	doc, err := result.Read(jsonPath)
	if err != nil {
		return err
	}
	if doc.Interrupted {
		return fmt.Errorf("the run of %d terminals was interrupted", p.Terminals)
	}
	nopm, _ := doc.Metric("nopm")
	tpm, _ := doc.Metric("tpm")
	p.NOPMDB, p.NOPMClient = value(nopm.DB), value(nopm.Client)
	p.TPMDB, p.TPMClient = value(tpm.DB), value(tpm.Client)
	if e, ok := doc.Extra["efficiency_pct"].(float64); ok {
		p.Efficiency = e
	}
	for _, tx := range doc.Transactions {
		p.Errors += tx.Errors
		if tx.Name == doc.PrimaryTx {
			p.NewOrderP90 = tx.Latency.P90
		}
	}
	if doc.Sessions != nil {
		p.WaitP90 = doc.Sessions.Wait.P90
	}
	if v := result.VerdictOf(doc); v != nil {
		p.Verdict = v.Line()
	}
	from, to := window(doc)
	p.window(samples, from, to)
	return nil
}

func value(v *float64) float64 {
	if v == nil {
		return 0
	}
	return *v
}

// window is when the run's measured window began and ended: at its
// marks, the database's counters read at its edges, else as long as the
// document says, ending with the series' last window second.
func window(doc *result.Document) (from, to time.Time) {
	at := func(s float64) time.Time { return doc.StartedAt.Add(time.Duration(s * float64(time.Second))) }
	if len(doc.Marks) >= 2 {
		return at(doc.Marks[0].At), at(doc.Marks[len(doc.Marks)-1].At)
	}
	var end float64
	for _, pt := range doc.Series {
		if pt.Phase == "window" {
			end = pt.T
		}
	}
	return at(end - doc.WindowSeconds), at(end)
}

// window takes the samples nearest from, to and the quarters between:
// RSS at each, and the CPU from the first to the last in cores.
func (p *Point) window(samples []harness.ProcSample, from, to time.Time) {
	a, z := nearest(samples, from), nearest(samples, to)
	if a < 0 || z <= a {
		return
	}
	for q := range 5 {
		p.RSSWindow = append(p.RSSWindow, samples[nearest(samples, from.Add(to.Sub(from)*time.Duration(q)/4))].RSS)
	}
	p.WindowCores = (samples[z].CPU - samples[a].CPU).Seconds() / samples[z].At.Sub(samples[a].At).Seconds()
}

// nearest is the index of the sample nearest t, -1 without samples.
func nearest(samples []harness.ProcSample, t time.Time) int {
	best := -1
	for i, s := range samples {
		if best < 0 || s.At.Sub(t).Abs() < samples[best].At.Sub(t).Abs() {
			best = i
		}
	}
	return best
}

// loadavg is the machine's three load averages, "" if unread.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}

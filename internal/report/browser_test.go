package report_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/dbrig/dbrig/internal/report"
	"github.com/dbrig/dbrig/internal/report/browsertest"
)

// pageTimeout is the longest a page may take to load, draw and be shot.
const pageTimeout = time.Minute

// TestBrowserReport opens generated reports in headless Chromium and checks
// that they load cleanly, stay off the network and draw their charts.
func TestBrowserReport(t *testing.T) {
	dir := t.TempDir()
	pages := []struct {
		name     string
		write    func(path string) error
		canvases int
	}{
		{"sweep", func(path string) error { return writeReport(path, "testdata/sweep.json") }, 3},
		{"run", func(path string) error { return writeReport(path, "testdata/run.json") }, 2},
		{"compare", func(path string) error { return writeCompare(path, "testdata/run.json", "testdata/runs/p00-r0.json") }, 0},
		// The CPU test's sweep: seconds per loop and loops per minute
		// against sessions, one line per arithmetic, and the change over
		// one session for each.
		{"cpu-sweep", func(path string) error { return writeReport(path, "testdata/cpu-sweep/sweep.json") }, 4},
		{"cpu-run", func(path string) error { return writeReport(path, "testdata/cpu-run.json") }, 1},
		{"v1-sweep", func(path string) error { return writeReport(path, "testdata/v1/sweep/sweep.json") }, 2},
		// A run with telemetry (PostgreSQL 15 in a 320MB cgroup): throughput,
		// latency, sessions by wait class, host CPU and the data disk.
		{"telemetry-run", func(path string) error { return writeReport(path, "testdata/telemetry-run.json") }, 6},
		// A run whose managed PostgreSQL 15 was killed 15 s in and restarted
		// (--kill-server-at 15s --audit-durability): the kill and the
		// restart marked on the throughput chart, the outage around them
		// shaded, with the transactions in doubt per second.
		{"durability-run", func(path string) error { return writeReport(path, "testdata/durability-run.json") }, 7},
		// A run whose server was killed 30 s in and never restarted, and
		// one whose server was stopped (SIGSTOP) for 15 s: the stretch
		// without a server, or the stall, shaded on the throughput and the
		// latency per second, and the telemetry's gap on its charts.
		{"lost-run", func(path string) error { return writeReport(path, "testdata/lost-run.json") }, 7},
		{"stall-run", func(path string) error { return writeReport(path, "testdata/stall-run.json") }, 7},
		// A block-io run: the same charts, and the run in one line.
		{"blockio-run", func(path string) error { return writeReport(path, "testdata/blockio-run.json") }, 6},
		// The block-io sessions sweep: physical reads, logical reads and
		// operations against sessions, the change over one session, and
		// why (with the sweet spot marked) and where the CPU went.
		{"blockio-sweep", func(path string) error { return writeReport(path, "testdata/blockio-sweep/sweep.json") }, 6},
		// A dvd-store run (PostgreSQL 15, size S, 5 VUs): each step's
		// throughput and latency, and the telemetry's charts.
		{"dvdstore-run", func(path string) error { return writeReport(path, "testdata/dvdstore-run.json") }, 6},
		// A mixed run: order entry with 3 VUs and the category-sales
		// reports with 2, in one window.
		{"mixed-run", func(path string) error { return writeReport(path, "testdata/mixed-run.json") }, 6},
		// The DVD Store cache study: the reports alone and beside the order
		// entry; each workload's metrics, their gains where they ran, and
		// why.
		{"dvdstore-sweep", func(path string) error { return writeReport(path, "testdata/dvdstore-sweep/sweep.json") }, 13},
		// A confined buffer-cache sweep: NOPM and TPM against shared_buffers,
		// the change over the baseline, and why (misses, disk reads, hits;
		// the host's CPU and the read latency).
		{"confined-sweep", func(path string) error { return writeReport(path, "testdata/confined-sweep/sweep.json") }, 6},
		// A pooled run (200 terminals on 1 SQLite session): the sessions
		// section with the wait for a session per second.
		{"pooled-run", func(path string) error { return writeReport(path, "testdata/pooled-run.json") }, 7},
		// A cluster of a primary and two replicas 5 ms away, one of them
		// synchronous (a quorum), whose primary was lost 12 s in: each
		// replica's lag in time and in bytes, node2's ending as it was
		// promoted, node3's catching up after the gap.
		{"replication-run", func(path string) error { return writeReport(path, "testdata/replication-run.json") }, 9},
		// A failover sweep: Patroni's lease of 6 s against 12 s, a primary
		// and an asynchronous replica lost 4 s into every run, each run
		// audited: the outage at each point with its intervals, and its
		// change over the baseline in seconds.
		{"failover-sweep", func(path string) error { return writeReport(path, "testdata/failover-sweep/sweep.json") }, 7},
		// The same cluster, its nodes' CPU read each second: each node
		// stacked on the host's CPU chart, and a line each in the Cluster
		// nodes section, node1's ending where it was lost.
		{"nodes-run", func(path string) error { return writeReport(path, "testdata/nodes-run.json") }, 10},
		// A 3-node Galera cluster, its third node killed 20 s in: each
		// node's certification failures and flow control per second, the
		// killed node's lines ending at its loss.
		{"galera-kill-run", func(path string) error { return writeReport(path, "testdata/galera-kill-run.json") }, 10},
		// Round-robin against warehouse affinity on 3 Galera nodes: the
		// retries and aborts per minute at each point, with their
		// intervals.
		{"affinity-sweep", func(path string) error { return writeReport(path, "testdata/affinity-sweep/sweep.json") }, 6},
	}
	// sections are what a page must show, by CSS selector, with the text
	// each must hold.
	sections := map[string][2]string{
		"pooled-run":      {"#sessions", "200 terminals over 1 session"},
		"telemetry-run":   {"#verdict", "of its ceiling"},
		"replication-run": {"#replication", "node3"},
		"failover-sweep":  {"#faults", "cut the outage by 5.94 s"},
		"nodes-run":       {"#nodes", "node3"},
		"galera-kill-run": {"#members", "127.0.0.1:36443"},
		"affinity-sweep":  {"#conflicts", "retries/min"},
	}

	// A page loads, draws and is shot in 1-5 s, more on a loaded host: the
	// deadlines are for a hung browser, each tab's its own, so that slow
	// pages before one do not spend its time.
	bctx := browsertest.Start(t, dir, time.Duration(len(pages))*pageTimeout)

	shots := os.Getenv("DBRIG_SCREENSHOT_DIR")
	if shots == "" {
		shots = dir
	} else if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}

	for _, pg := range pages {
		t.Run(pg.name, func(t *testing.T) {
			path := filepath.Join(dir, "report-"+pg.name+".html")
			if err := pg.write(path); err != nil {
				t.Fatal(err)
			}
			url := "file://" + path
			tctx, cancelTab := chromedp.NewContext(bctx)
			defer cancelTab()
			tctx, cancelDeadline := context.WithTimeout(tctx, pageTimeout)
			defer cancelDeadline()

			var mu sync.Mutex
			var problems, requests []string
			err := chromedp.Listen(tctx, func(ev any) {
				mu.Lock()
				defer mu.Unlock()
				switch ev := ev.(type) {
				case *runtime.EventConsoleAPICalled:
					if ev.Type == runtime.ConsoleAPICalledTypeError {
						var args []string
						for _, a := range ev.Args {
							args = append(args, strings.TrimSpace(string(a.Value)+" "+a.Description))
						}
						problems = append(problems, "console.error: "+strings.Join(args, " "))
					}
				case *runtime.EventExceptionThrown:
					d := ev.ExceptionDetails
					msg := d.Text
					if d.Exception != nil {
						msg += " " + d.Exception.Description
					}
					problems = append(problems, fmt.Sprintf("exception at %d:%d: %s", d.LineNumber, d.ColumnNumber, msg))
				case *log.EventEntryAdded:
					if ev.Entry.Level == log.EntryLevelError {
						problems = append(problems, "log: "+ev.Entry.Text+" "+ev.Entry.URL)
					}
				case *network.EventRequestWillBeSent:
					requests = append(requests, ev.Request.URL)
				}
			})

			if err != nil {
				t.Fatalf("open a tab: %v", err)
			}
			// chromedp enables the runtime, log and network domains itself.
			if err := chromedp.Do(tctx, chromedp.Navigate(url), chromedp.WaitReady("body")); err != nil {
				t.Fatalf("load %s: %v", url, err)
			}
			canvases, err := chromedp.Run(tctx, waitPainted())
			if err != nil {
				t.Fatalf("read the canvases: %v", err)
			}
			if sec, ok := sections[pg.name]; ok {
				text, err := chromedp.Run(tctx, chromedp.Evaluate[string](fmt.Sprintf(`(document.querySelector(%q) || {}).innerText || ""`, sec[0])))
				if err != nil || !strings.Contains(text, sec[1]) {
					t.Errorf("%s: section %s does not show %q (%v): %q", pg.name, sec[0], sec[1], err, text)
				}
			}
			png, err := chromedp.Run(tctx, chromedp.FullScreenshot(100))
			if err != nil {
				t.Fatalf("screenshot: %v", err)
			}
			shot := filepath.Join(shots, "report-"+pg.name+".png")
			if err := os.WriteFile(shot, png, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("screenshot: %s", shot)

			mu.Lock()
			defer mu.Unlock()
			for _, p := range problems {
				t.Errorf("%s: %s", pg.name, p)
			}
			// Seeing the page's own request shows the listener works, so that
			// no other request means none was made.
			if !contains(requests, url) {
				t.Errorf("%s: saw no request for the page itself (%s); the network listener is not working", pg.name, url)
			}
			for _, r := range requests {
				if r != url {
					t.Errorf("%s: network request to %s; the page must be self-contained", pg.name, r)
				}
			}
			if len(canvases) != pg.canvases {
				t.Errorf("%s: %d canvases, want %d", pg.name, len(canvases), pg.canvases)
			}
			for _, c := range canvases {
				if c.W == 0 || c.H == 0 || c.Painted == 0 {
					t.Errorf("%s: canvas %s not drawn: %dx%d, %d painted pixels", pg.name, c.ID, c.W, c.H, c.Painted)
				} else {
					t.Logf("canvas %s: %dx%d, %d painted pixels", c.ID, c.W, c.H, c.Painted)
				}
			}
		})
	}
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

type canvasInfo struct {
	ID      string `json:"id"`
	W       int    `json:"w"`
	H       int    `json:"h"`
	Painted int    `json:"painted"`
}

// canvasJS counts each canvas's non-transparent pixels.
const canvasJS = `Array.from(document.querySelectorAll("canvas")).map(c => {
	let painted = 0;
	if (c.width > 0 && c.height > 0) {
		const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
		for (let i = 3; i < d.length; i += 4) if (d[i] !== 0) painted++;
	}
	return {id: c.id, w: c.width, h: c.height, painted};
})`

// waitPainted reads the canvases until every one has pixels, or 5 s pass:
// Chart.js sizes a responsive canvas once layout has happened.
func waitPainted() chromedp.Action[[]canvasInfo] {
	read := chromedp.Evaluate[[]canvasInfo](canvasJS)
	return func(ctx context.Context, t *chromedp.Target) ([]canvasInfo, error) {
		deadline := time.Now().Add(5 * time.Second)
		for {
			out, err := read(ctx, t)
			if err != nil {
				return nil, err
			}
			done := true
			for _, c := range out {
				done = done && c.Painted > 0
			}
			if done || time.Now().After(deadline) {
				return out, nil
			}
			if _, err := chromedp.Sleep(100*time.Millisecond)(ctx, t); err != nil {
				return nil, err
			}
		}
	}
}

func writeReport(out, in string) error {
	d, err := report.Load(in)
	if err != nil {
		return err
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	if err := report.HTML(f, d); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func writeCompare(out, a, b string) error {
	da, err := report.Load(a)
	if err != nil {
		return err
	}
	db, err := report.Load(b)
	if err != nil {
		return err
	}
	c, err := report.Compare(da, db)
	if err != nil {
		return err
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	if err := report.CompareHTML(f, c); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

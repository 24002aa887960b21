package web_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/dbrig/dbrig/internal/catalog"
	"github.com/dbrig/dbrig/internal/report/browsertest"
	"github.com/dbrig/dbrig/internal/web"
)

// TestBrowser drives the UI in headless Chromium as a user would: the
// list of runs (a document with markup in every string among them, which
// must show as text), a click from the list to a run's report and back,
// a filter by a config key, the history chart with its change point at
// run 20, and two runs side by side; with no script error, no dialog and
// no request but to the server.
func TestBrowser(t *testing.T) {
	dir := t.TempDir()
	bctx := browsertest.Start(t, dir, 2*time.Minute)
	c, ids := filled(t, "sqlite:"+filepath.Join(dir, "c.db"))
	srv := httptest.NewServer(web.Handler(web.Options{Catalog: c}))
	defer srv.Close()
	const mark = `<script>alert("xss")</script>`
	doc, _ := os.ReadFile("../report/testdata/telemetry-run.json")
	req, _ := http.NewRequest("POST", srv.URL+"/api/runs", bytes.NewReader(hostile(t, doc, mark)))
	req.Header.Set("Content-Type", "application/json")
	if resp, err := srv.Client().Do(req); err != nil || resp.StatusCode != 201 {
		t.Fatalf("the hostile document: %v %v", resp.StatusCode, err)
	}

	tctx, cancel := chromedp.NewContext(bctx)
	defer cancel()
	var mu sync.Mutex
	var problems, elsewhere []string
	chromedp.Listen(tctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError {
				problems = append(problems, "console.error")
			}
		case *runtime.EventExceptionThrown:
			problems = append(problems, "exception: "+ev.ExceptionDetails.Text+" "+description(ev.ExceptionDetails))
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.EntryLevelError {
				problems = append(problems, "log: "+ev.Entry.Text+" "+ev.Entry.URL)
			}
		case *page.EventJavascriptDialogOpening:
			problems = append(problems, "a dialog opened: "+ev.Message)
		case *network.EventRequestWillBeSent:
			if !strings.HasPrefix(ev.Request.URL, srv.URL+"/") {
				elsewhere = append(elsewhere, ev.Request.URL)
			}
		}
	})
	rows := `document.querySelectorAll("#runs tbody tr").length`
	waitFor := func(what, js string) {
		t.Helper()
		// Asked again and again, rather than by a poll inside the page,
		// which a navigation (to the report, Back) leaves unanswered.
		deadline := time.Now().Add(20 * time.Second)
		var last error
		for time.Now().Before(deadline) {
			ctx, cancel := context.WithTimeout(tctx, 2*time.Second)
			ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js))
			cancel()
			if err == nil && ok {
				return
			}
			last = err
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("waiting for %s (%s): %v", what, js, last)
	}
	text := func(js string) string {
		t.Helper()
		s, err := chromedp.Run(tctx, chromedp.Evaluate[string](js))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	shot := func(name string) {
		t.Helper()
		png, err := chromedp.Run(tctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		out := os.Getenv("DBRIG_SCREENSHOT_DIR")
		if out == "" {
			out = dir
		}
		if err := os.WriteFile(filepath.Join(out, "serve-"+name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	if err := chromedp.Do(tctx, chromedp.Navigate(srv.URL+"/")); err != nil {
		t.Fatal(err)
	}
	waitFor("the runs", rows+" == 39")
	if got := text(`document.querySelector("#runs tbody").textContent`); !strings.Contains(got, mark) {
		t.Errorf("the hostile document's workload is not shown as text: %.300s", got)
	}
	if n := text(`String(document.querySelectorAll("#runs script, #runs img").length)`); n != "0" {
		t.Errorf("%s elements came from a document's text", n)
	}
	shot("runs")

	// From the list to the report, and back.
	run := fmt.Sprintf(`tr[data-id=%q] a.run-link`, ids[19])
	if err := chromedp.Do(tctx, chromedp.Click(chromedp.CSS(run))); err != nil {
		t.Fatal(err)
	}
	waitFor("the report", fmt.Sprintf(`location.pathname == "/runs/%s/report" && document.querySelectorAll("canvas").length > 0`, ids[19]))
	if title := text(`document.title`); !strings.Contains(title, "tproc-c") {
		t.Errorf("the report's title: %q", title)
	}
	shot("report")
	// Back to the list (a page loaded anew: chromedp loses track of one
	// the browser's Back takes from its cache).
	if err := chromedp.Do(tctx, chromedp.Navigate(srv.URL+"/")); err != nil {
		t.Fatal(err)
	}
	waitFor("the runs again", rows+" == 39")

	// A filter by a config key, with a tag.
	if err := chromedp.Do(tctx, chromedp.SetValue(chromedp.CSS("#f-where"), "config.vus=4"), chromedp.SetValue(chromedp.CSS("#f-tag"), "half"),
		chromedp.Click(chromedp.CSS("#f-apply"))); err != nil {
		t.Fatal(err)
	}
	waitFor("the filtered runs", rows+" == 4")

	// The history of the series, its change point marked at run 20.
	text(`document.getElementById("f-where").value = "", ""`)
	if err := chromedp.Do(tctx, chromedp.SetValue(chromedp.CSS("#f-tag"), "nightly"), chromedp.Click(chromedp.CSS("#nav-history"))); err != nil {
		t.Fatal(err)
	}
	waitFor("the history chart", `document.getElementById("history-chart").dataset.points == "30" && document.getElementById("history-chart").dataset.changes == "1"`)
	if got := text(`document.getElementById("changes").textContent`); !strings.Contains(got, "changed at run "+catalog.ShortID(ids[19])) {
		t.Errorf("the change points say %q", got)
	}
	waitFor("the chart drawn", `(() => { const c = document.getElementById("history-chart"); const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data; let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i]) n++; return n > 1000; })()`)
	shot("history")

	// Two runs side by side.
	if err := chromedp.Do(tctx, chromedp.Click(chromedp.CSS("#nav-runs"))); err != nil {
		t.Fatal(err)
	}
	waitFor("the runs of the series", rows+" == 30")
	for _, id := range []string{ids[10], ids[25]} {
		if err := chromedp.Do(tctx, chromedp.Click(chromedp.CSS(fmt.Sprintf(`tr[data-id=%q] input.pick`, id)))); err != nil {
			t.Fatal(err)
		}
	}
	if err := chromedp.Do(tctx, chromedp.Click(chromedp.CSS("#compare-selected"))); err != nil {
		t.Fatal(err)
	}
	waitFor("the comparison", `document.querySelectorAll("#compare-metrics tr").length > 2 && document.querySelectorAll("#compare-telemetry tr").length > 2`)
	if got := text(`document.getElementById("compare-metrics").textContent`); !strings.Contains(got, "NOPM") {
		t.Errorf("the comparison: %q", got)
	}
	shot("compare")

	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		t.Error(p)
	}
	for _, u := range elsewhere {
		t.Errorf("a request to %s: the UI must reach nothing but its server", u)
	}
}

func description(d *runtime.ExceptionDetails) string {
	if d.Exception == nil {
		return ""
	}
	return d.Exception.Description
}

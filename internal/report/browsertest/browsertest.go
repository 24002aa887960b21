// Package browsertest starts Debian's Chromium, headless, for the tests
// that look at dbrig's pages as a reader would: the HTML reports and
// dbrig serve's UI.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Chromium finds Debian's Chromium. Without it the test skips, unless
// DBRIG_REQUIRE_CHROMIUM=1 (CI installs it) makes that a failure.
func Chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("DBRIG_REQUIRE_CHROMIUM") == "1" {
		t.Fatal("no chromium or chromium-browser on PATH, and DBRIG_REQUIRE_CHROMIUM=1: install Debian's chromium package")
	}
	t.Skip("no chromium or chromium-browser on PATH: the page is not checked in a browser (apt-get install chromium)")
	return ""
}

// Start starts a headless Chromium, its profile in dir, that lives for
// at most timeout and stops when the test ends; each tab is a
// chromedp.NewContext of the context it returns.
func Start(t *testing.T, dir string, timeout time.Duration) context.Context {
	t.Helper()
	exe := Chromium(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(filepath.Join(dir, "chromium-profile")),
		chromedp.WindowSize(1280, 900),
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc()
		cancel()
	})
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("start %s: %v", exe, err)
	}
	return bctx
}

//go:build linux

package cli_test

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/server/servertest"
)

// copyFile copies the file at from to to.
func copyFile(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestFullDiskSQLite: an SQLite database on a disk that fills early in
// the run fails most of its transactions. The probe's run exited 0 with
// 36,199 errors against 3,345 completions and an audit of SKIPs; the run
// now fails, exit 1, names its error rate in the summary's first line,
// and still prints the summary and writes its result.
func TestFullDiskSQLite(t *testing.T) {
	t.Parallel()
	built := filepath.Join(t.TempDir(), "x.db")
	mustRun(t, "build", "tproc-c", "--target", "sqlite:"+built, "--warehouses", "1")
	st, err := os.Stat(built)
	if err != nil {
		t.Fatal(err)
	}
	// A megabyte to spare: the run's first seconds fill it.
	disk := servertest.SmallDisk(t, st.Size()+1<<20)
	db := filepath.Join(disk, "x.db")
	copyFile(t, built, db)

	path := filepath.Join(t.TempDir(), "r.json")
	o := dbrig(t, "run", "tproc-c", "--target", "sqlite:"+db, "--rampup", "1s", "--duration", "4s", "--json", path)
	if o.code != exitcode.Fail {
		t.Errorf("exit %d, want %d: most transactions failed", o.code, exitcode.Fail)
	}
	doc, err := result.Read(path)
	if err != nil {
		t.Fatalf("the failed run's result: %v", err)
	}
	e := doc.ErrorRate
	if e == nil || !e.Exceeded || e.MaxPct != 1 || e.Pct < 10 || e.Errors == 0 || e.Transactions <= e.Errors {
		t.Fatalf("error rate %+v, want most of the window's transactions failed, past the default bound of 1%%", e)
	}
	first, _, _ := strings.Cut(o.stdout, "\n")
	if !strings.HasPrefix(first, "FAILED: error rate ") || !strings.Contains(first, "over the bound of 1% (--max-error-rate)") {
		t.Errorf("first summary line %q, want the error rate past its bound", first)
	}
	wantIn(t, "stdout", o.stdout, "Audit: none judged, all 4 checks skipped")
	wantIn(t, "stdout", o.stdout, "Result: "+path)

	// A bound the run stayed within passes it.
	o = dbrig(t, "run", "tproc-c", "--target", "sqlite:"+db, "--rampup", "0s", "--duration", "2s", "--max-error-rate", "100%", "--json", path)
	if o.code != 0 || strings.HasPrefix(o.stdout, "FAILED") {
		t.Errorf("exit %d, stdout starting %.40q; want 0 under --max-error-rate 100%%", o.code, o.stdout)
	}
	usageError(t, dbrig(t, "run", "tproc-c", "--target", "sqlite:"+db, "--max-error-rate", "101%"))

	// A sweep's run past the bound is kept but not counted, and stops the
	// sweep, exit 1; a resume with a bound it stays within carries on.
	spec := filepath.Join(t.TempDir(), "full.yaml")
	body := "name: full\ntarget: {url: 'sqlite:" + db + "'}\nworkload: tproc-c\nbuild: {warehouses: 1}\n" +
		"run: {rampup: 0s, duration: 2s}\nvary:\n  vus: [1, 2]\nrepeat: 1\n"
	if err := os.WriteFile(spec, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	o = dbrig(t, "sweep", spec, "--out", out)
	if o.code != exitcode.Fail {
		t.Errorf("sweep: exit %d, want %d", o.code, exitcode.Fail)
	}
	wantIn(t, "sweep stderr", o.stderr, "run 1 (point 1, repetition 1) failed ")
	wantIn(t, "sweep stderr", o.stderr, "over the bound of 1% (--max-error-rate): "+filepath.Join("runs", "p01-r1-errors.json")+" is kept but not counted")
	if d, err := result.Read(filepath.Join(out, "runs", "p01-r1-errors.json")); err != nil || d.ErrorRate == nil || !d.ErrorRate.Exceeded {
		t.Errorf("the failed run's document: %v, error rate %+v", err, d)
	}
	if sw := readSweep(t, out); sw.Done != 0 || len(sw.Points[0].Errors) != 1 || len(sw.Points[0].Values["nopm"]) != 0 {
		t.Errorf("sweep after the failed run: done %d, point 1's errors %q, values %v; want nothing counted and the failure recorded",
			sw.Done, sw.Points[0].Errors, sw.Points[0].Values)
	}
	mustRun(t, "sweep", "--resume", out, "--max-error-rate", "100%")
	if sw := readSweep(t, out); !sw.Complete || sw.Done != 2 {
		t.Errorf("resumed sweep: complete %v, done %d; want both runs", sw.Complete, sw.Done)
	}
}

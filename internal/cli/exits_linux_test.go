//go:build linux

package cli_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

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

// fill writes into dir until its disk is full.
func fill(t *testing.T, dir string) {
	f, err := os.CreateTemp(dir, "fill-*")
	if err != nil {
		t.Error(err) // not Fatal: it runs on a goroutine of its own
		return
	}
	defer f.Close()
	page := make([]byte, 4096)
	for {
		if _, err := f.Write(page); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Errorf("filling %s: %v, want ENOSPC", dir, err)
			}
			return
		}
	}
}

// wantFallback checks a run whose result could not be written at path:
// exit 1, its summary printed all the same, and the document in a file
// of its own in the temporary directory, which the output names; it
// returns that file.
func wantFallback(t *testing.T, o outcome, path string) string {
	t.Helper()
	if o.code != exitcode.Fail {
		t.Errorf("exit %d, want %d: the result is not where it was asked for", o.code, exitcode.Fail)
	}
	wantIn(t, "stdout", o.stdout, "new_order")
	_, fallback, ok := strings.Cut(o.stdout, "\nResult: ")
	fallback = strings.TrimSuffix(fallback, "\n")
	if !ok || filepath.Dir(fallback) != os.TempDir() {
		t.Fatalf("stdout names no result in %s:\n%s", os.TempDir(), o.stdout)
	}
	wantIn(t, "stderr", o.stderr, "dbrig: the result could not be written to "+path+" (")
	wantIn(t, "stderr", o.stderr, "): it is at "+fallback+" instead\n")
	if _, err := result.Read(fallback); err != nil {
		t.Errorf("the document at the fallback: %v", err)
	}
	return fallback
}

// TestResultFallbackSQLite: a result that cannot be written where asked at
// the end of the run is not lost. The probe's runs printed no summary and
// kept nothing; now the summary is printed, the document goes to a file of
// its own in the temporary directory, named, and the exit code is 1. With
// --audit-durability the acknowledgement log goes along with it, never
// deleted: the audit's finding is in the document, and audit durability
// reads the log again from there.
func TestResultFallbackSQLite(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir()) // where the fallback goes
	dir := t.TempDir()
	u := "sqlite:" + filepath.Join(dir, "x.db")
	mustRun(t, "build", "tproc-c", "--target", u, "--warehouses", "1")
	run := func(path string, during func()) outcome {
		// The window's third second: long after the path was checked, long
		// before the run ends.
		timer := time.AfterFunc(3*time.Second, during)
		defer timer.Stop()
		return dbrig(t, "run", "tproc-c", "--target", u, "--rampup", "1s", "--duration", "4s", "--audit-durability", "--json", path)
	}

	t.Run("a directory where the result goes", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "r.json")
		o := run(path, func() {
			if err := os.Mkdir(path, 0o755); err != nil {
				t.Error(err)
			}
		})
		fallback := wantFallback(t, o, path)
		doc, err := result.Read(fallback)
		if err != nil {
			t.Fatal(err)
		}
		if d := doc.Durability; d == nil || d.Acknowledged == 0 || d.Missing != 0 || d.Log != filepath.Base(fallback[:len(fallback)-len(".json")]+".acks") {
			t.Fatalf("durability %+v, want every acknowledged New-Order found, and the log beside the document", d)
		}
		noFile(t, filepath.Join(filepath.Dir(path), "r.acks"))
		wantIn(t, "audit again", mustRun(t, "audit", "durability", fallback).stdout, "0 missing")
	})

	t.Run("a full disk", func(t *testing.T) {
		disk := servertest.SmallDisk(t, 1<<20)
		path := filepath.Join(disk, "r.json")
		o := run(path, func() { fill(t, disk) })
		fallback := wantFallback(t, o, path)
		// The log's lines, written at the end, found the disk full: no
		// audit, and what the log holds goes with the document.
		wantIn(t, "stderr", o.stderr, "dbrig: no durability audit: the acknowledgement log: ")
		wantIn(t, "stderr", o.stderr, "what the log holds is kept at "+strings.TrimSuffix(fallback, ".json")+".acks\n")
		if b, err := os.ReadFile(strings.TrimSuffix(fallback, ".json") + ".acks"); err != nil || len(b) == 0 {
			t.Errorf("the acknowledgement log beside the document: %d bytes, %v", len(b), err)
		}
	})
}

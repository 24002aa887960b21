//go:build linux

package cli_test

// How a run's end reads in its exit code: a signal, errors past the
// bound, a result that cannot be written where asked, on Linux: a full
// disk is a tmpfs of the test's own, and a user without rights is root's
// child as nobody.

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/server/servertest"
)

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
	b, err := os.ReadFile(built)
	if err == nil {
		err = os.WriteFile(db, b, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}

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
	fallback, _, _ = strings.Cut(fallback, "\n") // the catalogue's line follows
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
	u := sqliteTPROCC(t)
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

// TestSIGTERMSQLite: SIGTERM in the middle of a long run, as a CI
// timeout sends it, keeps the result, marked interrupted, and exits with
// the interrupt code, not 0; its thresholds are not judged on the short
// window unless --thresholds-on-interrupt asks, and a missed one then
// fails the run.
func TestSIGTERMSQLite(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	dir := t.TempDir()
	u := sqliteTPROCC(t)

	for _, c := range []struct {
		name      string
		args      []string
		code      int
		judged    bool
		threshold string
	}{
		{"thresholds not judged", nil, exitcode.Interrupted, false, "SKIP nopm>1: not judged: the run was interrupted"},
		{"--thresholds-on-interrupt", []string{"--thresholds-on-interrupt", "--threshold", "nopm>1000000000"}, exitcode.Fail, true, "FAIL nopm>1000000000: "},
	} {
		path := filepath.Join(dir, strings.Trim(c.name, "-")+".json")
		args := append([]string{"run", "tproc-c", "--target", u, "--rampup", "1s", "--duration", "10m", "--threshold", "nopm>1", "--json", path}, c.args...)
		stderr, exited, cmd := startSweep(t, bin, args...)
		waitFor(t, stderr, exited, "measure ", 0)
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		code := exitOf(t, waitExited(t, exited, stderr))
		if code != c.code {
			t.Errorf("%s: exit %d after SIGTERM, want %d", c.name, code, c.code)
		}
		doc, err := result.Read(path)
		if err != nil {
			t.Fatalf("%s: the interrupted run's result: %v", c.name, err)
		}
		if !doc.Interrupted || doc.WindowSeconds <= 0 || doc.WindowSeconds > 60 {
			t.Errorf("%s: interrupted %v, window %.1f s; want the result marked, over the seconds before the signal", c.name, doc.Interrupted, doc.WindowSeconds)
		}
		if len(doc.Thresholds) == 0 || doc.Thresholds[0].Unjudged == c.judged || doc.Thresholds[0].Met == !c.judged {
			t.Errorf("%s: thresholds %+v, want them judged %v", c.name, doc.Thresholds, c.judged)
		}
		if !c.judged && result.Missed(doc.Thresholds) != 0 {
			t.Errorf("%s: thresholds not judged count as missed", c.name)
		}
		out := cmd.Stdout.(interface{ String() string }).String()
		wantIn(t, c.name+": stdout", out, "Interrupted: the figures cover the ")
		wantIn(t, c.name+": stdout", out, c.threshold)
		wantIn(t, c.name+": stdout", out, "Result: "+path)
	}
}

// waitExited waits for a process started by startSweep to end, and
// returns how it ended.
func waitExited(t *testing.T, exited <-chan error, out *watch) error {
	t.Helper()
	select {
	case err := <-exited:
		return err
	case <-time.After(30 * time.Second):
		t.Fatalf("dbrig still running 30s after the signal:\n%s", out)
	}
	return nil
}

// TestOutputRefusedSQLite: a place the result cannot be written is refused
// before the run, in one line, exit 2. The probe's runs went to their end
// and then lost the result: --json naming a directory, --results-dir
// naming a file, and a directory the user may not write in.
func TestOutputRefusedSQLite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "x.db")
	mustRun(t, "build", "tproc-c", "--target", "sqlite:"+db, "--warehouses", "1")
	file := filepath.Join(dir, "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	run := []string{"run", "tproc-c", "--target", "sqlite:" + db, "--rampup", "0s", "--duration", "2s"}
	wantIn(t, "refusal", usageError(t, dbrig(t, append(run, "--json", dir)...)), "--json "+dir+" is a directory")
	wantIn(t, "refusal", usageError(t, dbrig(t, append(run, "--results-dir", file)...)), file+" is a file, not a directory")
	wantIn(t, "refusal", usageError(t, dbrig(t, append(run, "--results-dir", filepath.Join(file, "sub"))...)), file+" is a file, not a directory")

	// A directory closed to the user: root may write anywhere, so the run
	// is the binary's, as nobody, on a database nobody may write.
	closed := filepath.Join(dir, "closed")
	if err := os.Mkdir(closed, 0o555); err != nil {
		t.Fatal(err)
	}
	bin := buildBinary(t)
	cmd := exec.Command(bin, append(run, "--results-dir", filepath.Join(closed, "results"))...)
	if os.Geteuid() == 0 {
		for d := filepath.Dir(bin); d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
			if err := os.Chmod(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		for d := dir; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
			if err := os.Chmod(d, 0o777); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chmod(db, 0o666); err != nil {
			t.Fatal(err)
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	var stdout, stderr strings.Builder
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, &stdout, &stderr
	o := outcome{code: exitOf(t, cmd.Run()), stdout: stdout.String(), stderr: stderr.String()}
	t.Logf("as uid 65534: exit %d\n--- stdout:\n%s--- stderr:\n%s", o.code, o.stdout, o.stderr)
	wantIn(t, "refusal", usageError(t, o), "cannot write a file in "+closed+": permission denied")
}

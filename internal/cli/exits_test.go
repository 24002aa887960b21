package cli_test

// How a run's end reads in its exit code: a signal, errors past the
// bound, a result that cannot be written where asked.

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
)

// exitOf is the exit code in a finished process's error.
func exitOf(t *testing.T, err error) int {
	t.Helper()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	t.Fatalf("dbrig did not exit: %v", err)
	return -1
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
	u := "sqlite:" + filepath.Join(dir, "x.db")
	mustRun(t, "build", "tproc-c", "--target", u, "--warehouses", "1")

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

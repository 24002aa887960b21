package cli_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dbrig/dbrig/internal/result"
)

// TestConnectionsSQLite: --connections runs the VUs as terminals over a
// pool of sessions, end to end through the command line, and is refused
// in one line where it cannot apply.
func TestConnectionsSQLite(t *testing.T) {
	dir := t.TempDir()
	u := sqliteTPROCC(t)

	path := filepath.Join(dir, "r.json")
	o := mustRun(t, "run", "tproc-c", "--target", u, "--mode", "sql", "--vus", "30", "--connections", "3",
		"--rampup", "0s", "--duration", "2s", "--json", path)
	wantIn(t, "summary", o.stdout, "Sessions: 3 shared by 30 terminals; in use p95 ")
	wantIn(t, "summary", o.stdout, "wait for a session p90 ")
	wantIn(t, "stderr", o.stderr, "30 VUs on 3 sessions")
	// The telemetry's one line counts the sessions, not the terminals.
	_, after, _ := strings.Cut(o.stdout, "sessions  elapsed s")
	if rows := strings.SplitN(after, "\n", 3); len(rows) < 2 || !strings.HasPrefix(strings.TrimSpace(rows[1]), "3 ") {
		t.Errorf("the one line's sessions are not the 3 of the pool:\n%s", o.stdout)
	}
	wantIn(t, "progress", o.stderr, "/3 queue ")
	doc := readDoc(t, path, "sqlite", "sql")
	s := doc.Sessions
	if s == nil || s.Sessions != 3 || s.Terminals != 30 {
		t.Fatalf("sessions = %+v, want 3 shared by 30 terminals", s)
	}
	if s.InUseMax < 1 || s.InUseMax > 3 || s.WaitHistogram == "" {
		t.Errorf("sessions = %+v: in use at most 3, and a wait histogram", s)
	}
	if got := doc.Config["connections"]; got != 3.0 {
		t.Errorf("config.connections = %v, want 3", got)
	}
	if !slices.ContainsFunc(doc.Series, func(pt result.Point) bool { return pt.Wait != nil }) {
		t.Error("no second of the series has the waits for a session")
	}
	html := filepath.Join(dir, "r.html")
	mustRun(t, "report", path, "-o", html)
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	wantIn(t, "report", string(page), "session wait p95")
	wantIn(t, "report", string(page), "30 terminals shared 3 sessions")

	// dvd-reports' virtual users each keep their session: they do not
	// pace, so a pool of sessions would save nothing.
	dvd := "sqlite:" + filepath.Join(dir, "d.db")
	mustRun(t, "build", "dvd-store", "--target", dvd, "--size", "2MB")

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "tproc-c", "--target", u, "--mode", "sql", "--vus", "30", "--connections", "40"}, "--connections 40 is more than --vus 30"},
		{[]string{"run", "tproc-c", "--target", u, "--mode", "sql", "--connections", "-1"}, "--connections must not be negative"},
		{[]string{"run", "tproc-c", "--target", u, "--mode", "sql", "--vus", "4", "--connections", "2", "--with", "tproc-c:1"}, "--connections does not run beside --with"},
		{[]string{"run", "dvd-reports", "--target", dvd, "--vus", "4", "--connections", "2"}, "--connections: this workload's virtual users cannot share sessions"},
		// A run of a fixed amount of work, such as the cpu workload's, has
		// no virtual users to pool, nor the flag.
		{[]string{"run", "cpu", "--target", u, "--connections", "2"}, "unknown flag: --connections"},
	} {
		wantIn(t, "stderr", usageError(t, dbrig(t, append(c.args, "--json", filepath.Join(dir, "no.json"))...)), c.want)
		noFile(t, filepath.Join(dir, "no.json"))
	}
}

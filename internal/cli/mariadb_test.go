package cli_test

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dbrig/dbrig/internal/server/mariadb/mariatest"
)

// TestMariaDBRunKeepsThePassword: a run on a real MariaDB through a URL
// with a password (the managed server's generated one) prints the result
// and writes its document, and neither holds the password.
func TestMariaDBRunKeepsThePassword(t *testing.T) {
	t.Parallel()
	u, pw := withPassword(t, mariatest.NewDB(t))
	if len(pw) < 16 {
		t.Fatalf("the managed server's password %q is no secret", pw)
	}
	out := filepath.Join(t.TempDir(), "cpu.json")
	o := mustRun(t, "run", "cpu", "--target", u, "--loops", "100000", "--arith", "float", "--json", out)
	wantIn(t, "output", o.stdout, "Result ")
	doc, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(doc) || !strings.Contains(string(doc), `"mariadb"`) {
		t.Errorf("the document is not a MariaDB run's:\n%.400s", doc)
	}
	if strings.Contains(o.stdout+o.stderr+string(doc), pw) {
		t.Error("the password was printed or written")
	}
}

// TestMariaDBServerURLWorksAsPrinted: the URLs dbrig server start --kind
// mariadb prints hold no password and no placeholder for one, and a run
// takes each of them as printed (the password is read from the file the
// URL names, so it never is on a command line).
func TestMariaDBServerURLWorksAsPrinted(t *testing.T) {
	t.Parallel()
	mariatest.Bin(t)
	dir := t.TempDir()
	t.Cleanup(func() { dbrig(t, "server", "stop", "--dir", dir) })
	start := mustRun(t, "server", "start", "--kind", "mariadb", "--dir", dir)
	secret, err := os.ReadFile(filepath.Join(dir, "dbrig-secret"))
	if err != nil {
		t.Fatal(err)
	}
	pw := strings.TrimSpace(string(secret))
	for _, label := range []string{"URL", "Socket"} {
		u := field(t, start.stdout, label)
		if strings.Contains(u, pw) || strings.Contains(u, "xxxxx") || !strings.Contains(u, "passfile=") {
			t.Errorf("%s %s: want a passfile and no password", label, u)
		}
		o := mustRun(t, "run", "cpu", "--target", u, "--loops", "100000", "--arith", "float",
			"--json", filepath.Join(t.TempDir(), "cpu.json"))
		wantIn(t, "run through the printed "+label, o.stdout, "Result ")
		if strings.Contains(o.stdout+o.stderr, pw) {
			t.Errorf("the run through %s printed the password", label)
		}
	}
	status := mustRun(t, "server", "status", "--dir", dir)
	if got := field(t, status.stdout, "url"); got != field(t, start.stdout, "URL") {
		t.Errorf("status url %q, start printed %q", got, field(t, start.stdout, "URL"))
	}
}

// TestMariaDBManagedSweep: a sweep on a managed MariaDB server starts it
// with each point's setting, settles it before each run, and stops it.
func TestMariaDBManagedSweep(t *testing.T) {
	t.Parallel()
	spec := filepath.Join(t.TempDir(), "spec.yaml")
	if err := os.WriteFile(spec, []byte("name: maria\ntarget: {managed: mariadb}\nworkload: cpu\n"+
		"run: {loops: 100000, arith: float}\nvary:\n  innodb_buffer_pool_size: [64M, 128M]\nrepeat: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := os.MkdirTemp("", "dbrig-sweep-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(out) })
	mariatest.NewServer(t) // skips, or fails under DBRIG_REQUIRE_MARIADB=1, without binaries
	o := mustRun(t, "sweep", spec, "--out", out)
	wantIn(t, "sweep log", o.stdout+o.stderr, "settled: InnoDB history list")
	if strings.Contains(o.stdout+o.stderr, "not settled") {
		t.Errorf("the server was not settled:\n%s", o.stderr)
	}
	doc, err := os.ReadFile(filepath.Join(out, "sweep.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), `"kind": "mariadb"`) && !strings.Contains(string(doc), `"kind":"mariadb"`) {
		t.Errorf("sweep document names no MariaDB target:\n%.600s", doc)
	}
	// The managed server's password is in its directory, and nowhere else.
	secret, err := os.ReadFile(filepath.Join(out, "server", "dbrig-secret"))
	if err != nil {
		t.Fatal(err)
	}
	pw := strings.TrimSpace(string(secret))
	docs := 0
	filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".json") {
			return err
		}
		docs++
		if b, err := os.ReadFile(path); err != nil || strings.Contains(string(b), pw) {
			t.Errorf("%s holds the password (%v)", path, err)
		}
		return nil
	})
	if docs < 3 || strings.Contains(o.stdout+o.stderr, pw) {
		t.Errorf("%d documents (want the sweep's and two runs'); password printed: %v", docs, strings.Contains(o.stdout+o.stderr, pw))
	}
}

// TestGaleraServerCommands: server start --nodes makes a Galera cluster
// (of one node here: its table is the point, not the others), start and
// status print each node's view of the cluster and its URL, a run takes
// that URL as printed, failover is refused in one line, and stop stops it.
func TestGaleraServerCommands(t *testing.T) {
	t.Parallel()
	mariatest.RequireCluster(t)
	dir := serverDir(t)
	row := regexp.MustCompile(`(?m)^\s+node1\s+member\s+Primary\s+1\s+yes\s+Synced\s+127\.0\.0\.1:\d+$`)
	start := mustRun(t, "server", "start", "--kind", "mariadb", "--nodes", "1", "--dir", dir)
	wantIn(t, "start", start.stdout, "Topology: a cluster of 1 node, taking writes")
	wantIn(t, "start's progress", start.stderr, "node1: founding the cluster")
	if !row.MatchString(start.stdout) {
		t.Errorf("start printed no row for node1 as a synced member of a cluster of 1:\n%s", start.stdout)
	}
	status := mustRun(t, "server", "status", "--dir", dir)
	if !row.MatchString(status.stdout) {
		t.Errorf("status printed no row for node1 as a synced member of a cluster of 1:\n%s", status.stdout)
	}
	u := field(t, status.stdout, "node1 url")
	o := mustRun(t, "run", "cpu", "--target", u, "--loops", "100000", "--arith", "float", "--json", filepath.Join(t.TempDir(), "cpu.json"))
	wantIn(t, "run through node1's URL", o.stdout, "Result ")
	wantIn(t, "failover", usageError(t, dbrig(t, "server", "failover", "--dir", dir)), "--kill-node-at")
	wantIn(t, "stop", mustRun(t, "server", "stop", "--dir", dir).stdout, "Stopped the server in "+dir)
	stopped := dbrig(t, "server", "status", "--dir", dir)
	if stopped.code != 1 {
		t.Errorf("status of the stopped cluster: exit %d, want 1", stopped.code)
	}
	wantIn(t, "status after stop", stopped.stdout, "node1: stopped last: the next start founds the cluster from it")
}

package cli_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/server/postgres"
	"github.com/dbrig/dbrig/internal/server/postgres/pgtest"
)

// TestDurabilityAudit is the acceptance run: a managed PostgreSQL with its
// default, durable settings, killed with SIGKILL mid-window and started
// again. Every New-Order it acknowledged is still there, those in doubt
// are shown, the consistency check passes, and dbrig audit durability
// finds the same again; once an acknowledged order is deleted, it names
// that order and fails.
func TestDurabilityAudit(t *testing.T) {
	if testing.Short() {
		t.Skip("kills and restarts a server of its own")
	}
	s, u := managedTPROCC(t, nil)
	out := filepath.Join(t.TempDir(), "r.json")
	o := dbrig(t, killRun(s, u, out, "procs")...)
	if o.code != 0 {
		t.Fatalf("exit %d, want 0: nothing acknowledged may be lost with durable settings", o.code)
	}
	d := audited(t, out)
	if d.Missing != 0 || len(d.MissingNames) != 0 {
		t.Errorf("%d acknowledged New-Orders missing (%v), want none", d.Missing, d.MissingNames)
	}
	wantIn(t, "stdout", o.stdout, "0 missing;")
	wantIn(t, "stdout", o.stdout, "in doubt")
	checkPasses(t, u)
	wantIn(t, "audit", mustRun(t, "audit", "durability", out).stdout, "0 missing;")
	loseOne(t, u, out)
}

// TestDurabilityAuditSyncOff: with synchronous_commit=off, which the test
// sets (dbrig never weakens durability on its own), a commit is
// acknowledged before its WAL is written, and a kill can lose it. The
// audit then names what was lost and fails the run. A kill that happens
// to lose nothing in every try proves nothing either way; the audit's
// failing is then shown on an order deleted by hand.
func TestDurabilityAuditSyncOff(t *testing.T) {
	if testing.Short() {
		t.Skip("kills and restarts a server of its own")
	}
	s, u := managedTPROCC(t, map[string]string{"synchronous_commit": "off"})
	const tries = 3
	var out string
	for try := 1; try <= tries; try++ {
		out = filepath.Join(t.TempDir(), fmt.Sprintf("r%d.json", try))
		o := dbrig(t, killRun(s, u, out, "sql")...)
		d := audited(t, out)
		if d.Missing == 0 {
			if o.code != 0 {
				t.Fatalf("exit %d with nothing missing, want 0", o.code)
			}
			continue
		}
		if o.code != 1 {
			t.Errorf("exit %d with %d acknowledged New-Orders missing, want 1", o.code, d.Missing)
		}
		if int64(len(d.MissingNames)) != min(d.Missing, 1000) {
			t.Errorf("%d missing, %d named", d.Missing, len(d.MissingNames))
		}
		wantIn(t, "stdout", o.stdout, "Missing: "+d.MissingNames[0])
		wantIn(t, "stdout", o.stdout, fmt.Sprintf("FAIL lost_acks<1: %d", d.Missing))
		t.Logf("try %d: %d of %d acknowledged New-Orders lost with synchronous_commit=off, %d in doubt",
			try, d.Missing, d.Acknowledged, d.InDoubt)
		return
	}
	t.Logf("no acknowledged New-Order lost in %d kills with synchronous_commit=off", tries)
	loseOne(t, u, out)
}

// managedTPROCC starts a managed server of the test's own with settings
// and builds one warehouse on it.
func managedTPROCC(t *testing.T, settings map[string]string) (*postgres.Server, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := pgtest.NewServer(t)
	if err := s.Start(ctx, settings); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateDB(ctx, "tprocc"); err != nil {
		t.Fatal(err)
	}
	u := s.URLFor("tprocc")
	mustRun(t, "build", "tproc-c", "--target", u, "--warehouses", "1")
	return s, u
}

// killRun is a short audited run whose server is killed 3 s into its
// window and is down for 1 s, held to thresholds on what the audit finds
// missing and on the transactions in doubt.
func killRun(s *postgres.Server, u, out, mode string) []string {
	return []string{"run", "tproc-c", "--target", u, "--mode", mode, "--vus", "2", "--rampup", "1s", "--duration", "9s",
		"--audit-durability", "--kill-server-at", "4s", "--restart-after", "1s", "--server-dir", s.Dir, "--json", out,
		"--threshold", "lost_acks<1", "--threshold", "in_doubt<=1000"}
}

// audited reads what every audited run with a kill must record: the kill
// and the restart, lost connections among the errors, the outage around
// the kill, the New-Orders in doubt as the audit found them, the marks
// read on the one server, New-Orders looked up, the thresholds judged on
// the audit, and a consistency check that passed after recovery.
func audited(t *testing.T, out string) *result.Durability {
	t.Helper()
	doc, err := result.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Events) != 2 || !strings.HasPrefix(doc.Events[0].What, "server killed") || !strings.HasPrefix(doc.Events[1].What, "server up again") {
		t.Fatalf("events %+v, want the kill and the restart", doc.Events)
	} else if at := doc.Events[0].T; at < 4 || at > 5 {
		t.Errorf("killed %.1f s into the run, want 4", at)
	}
	var inDoubt int64
	for _, tx := range doc.Transactions {
		inDoubt += tx.InDoubt
	}
	if doc.ErrorClasses["connection_lost"]+inDoubt == 0 {
		t.Errorf("errors by class %v, %d in doubt; want lost connections, among the errors or in doubt", doc.ErrorClasses, inDoubt)
	}
	outage(t, doc, 2, doc.Events[0].T, doc.Events[1].T)
	if len(doc.Marks) != 2 || doc.Marks[0].Server == "" || doc.Marks[1].Server != doc.Marks[0].Server {
		t.Errorf("marks %+v, want both read on the one server, named", doc.Marks)
	}
	d := doc.Durability
	if d == nil {
		t.Fatal("no durability audit in the document")
	}
	if d.Acknowledged == 0 || d.Consistent == nil || !*d.Consistent {
		t.Errorf("durability %+v, want New-Orders looked up and the data consistent", d)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(out), d.Log)); err != nil {
		t.Errorf("the acknowledgement log: %v", err)
	}
	// Every New-Order in doubt was logged so, and none counted as done.
	for _, tx := range doc.Transactions {
		if tx.Name == doc.PrimaryTx && tx.InDoubt != d.InDoubt {
			t.Errorf("%s: %d in doubt in the window, the audit found %d logged so", tx.Name, tx.InDoubt, d.InDoubt)
		}
	}
	if len(doc.Thresholds) != 2 || doc.Thresholds[0].Unjudged || doc.Thresholds[0].Measured == nil || *doc.Thresholds[0].Measured != float64(d.Missing) {
		t.Errorf("thresholds %+v, want lost_acks judged on the audit's %d missing", doc.Thresholds, d.Missing)
	}
	return d
}

// outage checks the outage around an action of the run at out, of vus
// virtual users, from the event at from to the one at to: it covers them,
// and no virtual user's is shorter. A backend may still commit for a
// moment after its postmaster's kill, and a virtual user may reconnect as
// the action checks that the server is up, before it says so: a quarter
// of a second either side.
func outage(t *testing.T, doc *result.Document, vus int, from, to float64) {
	t.Helper()
	if len(doc.ActionOutages) != 1 {
		t.Fatalf("action outages %+v, want the action's", doc.ActionOutages)
	}
	o := doc.ActionOutages[0]
	// A server slow to come back (a loaded host's) may leave the virtual
	// users too little of the window to return in: the outage may then
	// run to its end, and says so.
	windowEnd := doc.WindowSeconds
	if r, err := time.ParseDuration(fmt.Sprint(doc.Config["rampup"])); err == nil {
		windowEnd += r.Seconds()
	}
	back := to+1 < windowEnd
	if end := o.Outage.At + o.Outage.Seconds; o.Outage.At > from+0.25 || end < min(to, windowEnd)-0.25 || back && o.ToEnd {
		t.Errorf("outage %+v (to the end: %v), want it to cover %.2f s to %.2f s (the window ends at %.2f s)", o.Outage, o.ToEnd, from, to, windowEnd)
	}
	if p := o.PerVU; p.Count != vus || back && p.NotBack != 0 || len(p.Seconds) != vus || p.Min < o.Outage.Seconds || p.Max < p.Median || p.Median < p.Min {
		t.Errorf("per VU %+v, want all %d back (the server up %.1f s before the window's end), each out at least the overall %.3f s", p, vus, windowEnd-to, o.Outage.Seconds)
	}
	if !slices.ContainsFunc(doc.Notes, func(n string) bool { return strings.HasPrefix(n, "Outage around the action at ") }) {
		t.Errorf("notes %q, want the outage said", doc.Notes)
	}
}

// movedMarks checks a run whose window's edges were read on two servers,
// a failover between them: the transaction counter, each server's own,
// gives no rate across them, and the orders' count read from the tables
// still does, the summary naming both.
func movedMarks(t *testing.T, doc *result.Document) {
	t.Helper()
	if len(doc.Marks) != 2 || doc.Marks[0].Server == "" || doc.Marks[1].Server == "" || doc.Marks[0].Server == doc.Marks[1].Server {
		t.Fatalf("marks %+v, want the window's start and end read on two servers, named", doc.Marks)
	}
	read := fmt.Sprintf("the window's start was read on %s and its end on %s, another server", doc.Marks[0].Server, doc.Marks[1].Server)
	lines := strings.Join(doc.Lines, "\n")
	wantIn(t, "summary", lines, "TPM: client side only; "+read+", whose counter is its own")
	wantIn(t, "summary", lines, read+": a count read from the tables holds across the two")
	if m, _ := doc.Metric("tpm"); m.DB != nil {
		t.Errorf("TPM's database side %v across two servers, want none", *m.DB)
	}
	if m, _ := doc.Metric("nopm"); m.DB == nil {
		t.Error("NOPM has no database side across the failover, want the tables' count")
	}
}

// loseOne deletes the last New-Order the run at out logged as
// acknowledged, and wants dbrig audit durability to name it and fail.
func loseOne(t *testing.T, u, out string) {
	t.Helper()
	log, err := os.ReadFile(strings.TrimSuffix(out, ".json") + ".acks")
	if err != nil {
		t.Fatal(err)
	}
	var w, d, o int
	for line := range strings.Lines(string(log)) {
		if strings.HasPrefix(line, "c ") {
			fmt.Sscan(line[2:], &w, &d, &o)
		}
	}
	pgExec(t, u, fmt.Sprintf("DELETE FROM orders WHERE o_w_id = %d AND o_d_id = %d AND o_id = %d", w, d, o))
	a := dbrig(t, "audit", "durability", out)
	if a.code != 1 {
		t.Errorf("audit after deleting an acknowledged order: exit %d, want 1", a.code)
	}
	wantIn(t, "audit", a.stdout, fmt.Sprintf("Missing: (w=%d, d=%d, o_id=%d)", w, d, o))
	wantIn(t, "audit", a.stdout, " 1 missing;")
}

// TestDurabilityBadInputs: the kill and the audit refuse what they cannot
// do in one line, exit 2, before anything runs.
func TestDurabilityBadInputs(t *testing.T) {
	t.Parallel()
	u := pgtest.NewDB(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "r.json")
	quiet := filepath.Join(dir, "quiet.json")
	if err := os.WriteFile(quiet, []byte(`{"schema_version": 2, "workload": "tproc-c"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"kill without a server", []string{"run", "tproc-c", "--target", u, "--kill-server-at", "15s", "--json", out}, "--server-dir DIR"},
		{"server without a kill", []string{"run", "tproc-c", "--target", u, "--server-dir", dir, "--json", out}, "--kill-server-at"},
		{"kill after the run", []string{"run", "tproc-c", "--target", u, "--kill-server-at", "2m", "--server-dir", dir, "--json", out}, "past the run's end"},
		{"negative pause", []string{"run", "tproc-c", "--target", u, "--kill-server-at", "5s", "--restart-after", "-1s", "--server-dir", dir, "--json", out}, "--restart-after"},
		{"not a managed server", []string{"run", "tproc-c", "--target", u, "--kill-server-at", "5s", "--server-dir", dir, "--json", out}, "dbrig server start --dir"},
		{"audit a workload without one", []string{"run", "cpu", "--audit-durability", "--json", out}, "--audit-durability"},
		{"audit no result", []string{"audit", "durability", filepath.Join(dir, "none.json")}, "no result document"},
		{"audit a run without a log", []string{"audit", "durability", quiet}, "--audit-durability"},
		{"audit nothing", []string{"audit"}, "dbrig audit durability RESULT"},
		{"lost_acks without an audit", []string{"run", "tproc-c", "--target", u, "--threshold", "lost_acks<1", "--json", out}, "judges the durability audit: add --audit-durability"},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantIn(t, "error", usageError(t, dbrig(t, c.args...)), c.want)
		})
	}
	noFile(t, out)
}

package cli_test

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/dbrig/dbrig/internal/human"
	"github.com/dbrig/dbrig/internal/report"
	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/telemetry"
)

// TestOtherSessionsPostgres is issue 35's probe: two runs at once on one
// database, each with a threshold on NOPM. The database's counters count
// both runs' New-Orders, so each run's database figure is about twice
// its client's. Each run's headline and threshold must take its own
// client's figure and say so, and its summary must name the other run's
// sessions: how many, and under which application name.
func TestOtherSessionsPostgres(t *testing.T) {
	t.Parallel()
	// Each run's sessions are named "dbrig" and eight hex digits of its
	// own; every run names the other's.
	outs, docs := twoRunsAtOnce(t, pgTPROCC(t))
	namesOthers(t, outs, docs, regexp.MustCompile(`^dbrig [0-9a-f]{8}$`), true)
}

// TestOtherSessionsMariaDB: the same on MariaDB, whose process list the
// telemetry reads. Without performance_schema, as the test server runs,
// it tells its own sessions by their connections' ids, and names other
// clients' by their user and host.
func TestOtherSessionsMariaDB(t *testing.T) {
	t.Parallel()
	outs, docs := twoRunsAtOnce(t, mariaTPROCC(t))
	namesOthers(t, outs, docs, regexp.MustCompile(`^[a-z]+@(localhost|127\.0\.0\.1)$`), false)
}

// TestOtherSessionsSQLite: two runs at once on one SQLite file. The
// tables count both runs' New-Orders as on a server, and each run's
// client figure stands as there; but an embedded database keeps no list
// of who has its file open, so no other session can be named, and the
// summary says that instead.
func TestOtherSessionsSQLite(t *testing.T) {
	t.Parallel()
	outs, docs := twoRunsAtOnce(t, sqliteTPROCC(t))
	for i, d := range docs {
		if d.Telemetry == nil || d.Telemetry.Others != nil || !strings.Contains(d.Telemetry.Unavailable[telemetry.OtherSessions], "SQLite keeps no list") {
			t.Errorf("run %d: the telemetry has other sessions %+v; want none, and why", i, d.Telemetry)
		}
		wantIn(t, "the headline's line", headlineLine(t, outs[i].stdout), "whether other clients than this run were active could not be read (SQLite keeps no list")
	}
}

// twoRunsAtOnce runs two runs at once on the tproc-c database at u, each with a
// threshold on NOPM, and checks that each one's headline and threshold
// take its own client's NOPM, about half its database's, and say so.
func twoRunsAtOnce(t *testing.T, u string) ([]outcome, []*result.Document) {
	dir := t.TempDir()
	outs, docs := make([]outcome, 2), make([]*result.Document, 2)
	var wg sync.WaitGroup
	for i := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Started together, their windows overlap but for how long
			// each takes to open.
			outs[i] = dbrig(t, "run", "tproc-c", "--target", u, "--vus", "2", "--rampup", "1s", "--duration", "3s",
				"--json", filepath.Join(dir, fmt.Sprintf("run%d.json", i)), "--threshold", "nopm>1")
		}()
	}
	wg.Wait()
	for i, o := range outs {
		if o.code != 0 {
			t.Fatalf("run %d: exit %d, want 0:\n%s", i, o.code, o.stderr)
		}
		// Not readDoc: it holds the two sides to agreeing.
		doc, err := result.Read(filepath.Join(dir, fmt.Sprintf("run%d.json", i)))
		if err != nil {
			t.Fatal(err)
		}
		docs[i] = doc
		nopm, _ := doc.Metric("nopm")
		if nopm.DB == nil || nopm.Client == nil {
			t.Fatalf("run %d: nopm has db %v, client %v; want both sides", i, nopm.DB, nopm.Client)
		}
		// Well beyond the sides' 1% tolerance: how far depends on how
		// long the windows overlapped, and, on SQLite, on how the two
		// shared the file's one writer's lock.
		if *nopm.DB < *nopm.Client*1.05 {
			t.Fatalf("run %d: the database's nopm %.0f is not well above the client's %.0f: the other run did not overlap this window", i, *nopm.DB, *nopm.Client)
		}
		if v := nopm.Value(); v != *nopm.Client {
			t.Errorf("run %d: the headline nopm is %.0f, want the client's %.0f, not the database's %.0f", i, v, *nopm.Client, *nopm.DB)
		}
		th := doc.Thresholds
		if len(th) != 1 || th[0].Measured == nil || *th[0].Measured != *nopm.Client || th[0].Side != result.SideClient || !th[0].Met {
			t.Fatalf("run %d: threshold %+v, want it judged on the client's nopm %.0f", i, th, *nopm.Client)
		}
		// The figure as the summary writes it: under 1,000 with a
		// decimal, above it grouped.
		wantIn(t, "stdout", o.stdout, "  "+report.ThresholdLine(th[0]))
		wantIn(t, "the headline's line", headlineLine(t, o.stdout),
			fmt.Sprintf("the client's figure stands for NOPM (%s, where the database counted %s)", human.Thousands(*nopm.Client), human.Thousands(*nopm.DB)))
	}
	return outs, docs
}

// namesOthers checks that each run's summary names the other run's
// sessions, all under one client name that matches name, and, where
// distinct says each run names its sessions its own way, not its own.
func namesOthers(t *testing.T, outs []outcome, docs []*result.Document, name *regexp.Regexp, distinct bool) {
	t.Helper()
	named := make([]string, 2)
	for i, doc := range docs {
		// The other run's sessions: its two virtual users, and the
		// connection that reads its marks where the sampler or an edge
		// caught it at work.
		var seen *telemetry.Others
		if doc.Telemetry != nil {
			seen = doc.Telemetry.Others
		}
		if seen == nil || seen.Sessions < 2 || len(seen.Clients) != 1 {
			t.Fatalf("run %d: other sessions %+v, want the other run's two virtual users or more, under one name", i, seen)
		}
		for client := range seen.Clients {
			if !name.MatchString(client) {
				t.Errorf("run %d: the other sessions' name %q does not match %s", i, client, name)
			}
			named[i] = client
		}
		line := headlineLine(t, outs[i].stdout)
		wantIn(t, "the headline's line", line, fmt.Sprintf("%d other sessions were active in the measured database during the window (%q ×%d)", seen.Sessions, named[i], seen.Sessions))
	}
	if distinct && named[0] == named[1] {
		t.Errorf("both runs name the other sessions %q: one of them named its own", named[0])
	}
}

// headlineLine is the summary's line that says which side of a metric
// stands, and why.
func headlineLine(t *testing.T, stdout string) string {
	t.Helper()
	for _, l := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(l, "Headline: ") {
			return l
		}
	}
	t.Errorf("no line says which side stands in:\n%s", stdout)
	return ""
}

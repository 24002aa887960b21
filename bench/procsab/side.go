//go:build unix

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing/fstest"

	"github.com/dbrig/dbrig/bench/internal/harness"
	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/telemetry"
	"github.com/dbrig/dbrig/internal/workload"
	"github.com/jackc/pgx/v5"
)

// side is one version of procs.sql: its label, the git revision it was
// read from ("" for a file or the working tree) and the statements that
// put its functions in place, in the build's order.
type side struct {
	label, rev string
	procs      []string
}

// loadSide reads src: "." is the checkout's procs.sql, an existing file is
// itself, anything else a git revision of the checkout in repo.
func loadSide(repo, src string) (side, error) {
	var b []byte
	var err error
	var rev string
	switch {
	case src == ".":
		b, err = os.ReadFile(repo + "/" + procsFile)
		src = "working tree"
	case fileExists(src):
		b, err = os.ReadFile(src)
	default:
		b, err = gitShow(repo, src)
		rev = src
	}
	if err != nil {
		return side{}, err
	}
	f, err := workload.ReadSQL(fstest.MapFS{"procs.sql": {Data: b}}, "procs.sql")
	if err != nil {
		return side{}, err
	}
	s := side{label: src, rev: rev}
	for _, name := range f.Named("proc:") {
		s.procs = append(s.procs, f.Get(name))
	}
	if _, ok := f["proc:tprocc_neword"]; !ok {
		return side{}, errors.New("no proc:tprocc_neword block: not tproc-c's procs.sql")
	}
	return s, nil
}

func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// gitShow reads procs.sql as it is at rev, which must name a commit.
func gitShow(repo, rev string) ([]byte, error) {
	if strings.HasPrefix(rev, "-") {
		return nil, errors.New("neither a file nor a git revision")
	}
	out, err := exec.Command("git", "-C", repo, "show", rev+":"+procsFile).Output()
	if err != nil {
		return nil, fmt.Errorf("neither a file nor a git revision with %s", procsFile)
	}
	return out, nil
}

// RunFigures is one run of one side.
type RunFigures struct {
	Pair int    `json:"pair"`
	Side string `json:"side"`
	// NOPM is the database's count when the run read it, else the
	// client's.
	NOPM float64 `json:"nopm"`
	// ServerMillisPerNO is the server's process tree's CPU over the
	// window per New-Order the client counted, from the run's telemetry.
	ServerMillisPerNO float64 `json:"server_ms_per_new_order"`
	// WALPerNO is the cluster's WAL bytes over the window (pg_stat_wal)
	// per New-Order the client counted, from the run's telemetry.
	WALPerNO  float64 `json:"wal_bytes_per_new_order"`
	Rollbacks float64 `json:"rollback_pct"`
	// AuditFailed names the audit items that did not pass.
	AuditFailed []string `json:"audit_failed,omitempty"`
	Errors      int64    `json:"errors"`
	// MicrosPerCall is each function's mean execution time per call
	// (pg_stat_statements, ramp-up included), with --statements.
	MicrosPerCall map[string]float64 `json:"us_per_call,omitempty"`
}

// runSide makes the side's database again from its copy, puts s's
// functions in place and runs dbrig once.
func runSide(ctx context.Context, kept *harness.Kept, url, dbrig, jsonPath string, s side, o options) (RunFigures, error) {
	var r RunFigures
	fmt.Printf("\n== Run: %s, %d VUs, %s ramp-up, %s measured\n", s.label, o.vus, o.rampup, o.duration)
	if err := kept.Restore(ctx, s.label); err != nil {
		return r, err
	}
	// A connection of the benchmark's own puts the side in place and
	// reads the statements' times.
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return r, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	prep := append(append([]string{}, s.procs...), "CHECKPOINT")
	if o.statements {
		prep = append(prep, "SELECT pg_stat_statements_reset()")
	}
	for _, stmt := range prep {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			return r, fmt.Errorf("putting %s's functions in place: %w", s.label, err)
		}
	}
	args := []string{"run", "tproc-c", "--target", url, "--mode", "procs", "--vus", strconv.Itoa(o.vus),
		"--rampup", o.rampup.String(), "--duration", o.duration.String(), "--json", jsonPath}
	// The run's own report goes to a log beside its document.
	log, err := os.Create(strings.TrimSuffix(jsonPath, ".json") + ".log")
	if err != nil {
		return r, err
	}
	defer log.Close()
	cmd := harness.Command(ctx, dbrig, args...)
	cmd.Stdout = log
	if _, _, err := harness.Timed(ctx, cmd); err != nil {
		return r, fmt.Errorf("%w (its report: %s)", err, log.Name())
	}
	doc, err := result.Read(jsonPath)
	if err != nil {
		return r, err
	}
	if err := r.read(doc); err != nil {
		return r, err
	}
	if o.statements {
		r.MicrosPerCall, err = perCall(ctx, conn)
	}
	return r, err
}

// read takes the run's figures from its document.
func (r *RunFigures) read(doc *result.Document) error {
	nopm, _ := doc.Metric("nopm")
	if doc.Interrupted || nopm.Client == nil {
		return errors.New("the run was interrupted or counted no New-Order")
	}
	r.NOPM = *nopm.Client
	if nopm.DB != nil {
		r.NOPM = *nopm.DB
	}
	if doc.Telemetry == nil {
		return errors.New("the run recorded no telemetry")
	}
	sum := telemetry.Summarize(doc.Telemetry)
	h := sum.Host
	if h == nil || h.Server == nil {
		return errors.New("the run's telemetry has no server CPU (is the server on this host?)")
	}
	// Percent of all CPUs over the window, into CPU ms per minute.
	r.ServerMillisPerNO = *h.Server / 100 * float64(doc.Host.CPUs) * 60e3 / *nopm.Client
	if sum.DB != nil {
		r.WALPerNO = sum.DB.Rates[telemetry.WALBytes] * 60 / *nopm.Client
	}
	if n := doc.Counters["new_orders"] + doc.Counters["rollbacks"]; n > 0 {
		r.Rollbacks = 100 * float64(doc.Counters["rollbacks"]) / float64(n)
	}
	for _, a := range doc.Audit {
		if a.Result == "FAIL" {
			r.AuditFailed = append(r.AuditFailed, a.Name)
		}
	}
	for _, tx := range doc.Transactions {
		r.Errors += tx.Errors
	}
	return nil
}

// callOf finds the function a top-level statement calls.
var callOf = regexp.MustCompile(`\b(tprocc_\w+)\s*\(`)

// perCall reads each tproc-c function's mean execution time per call.
func perCall(ctx context.Context, conn *pgx.Conn) (map[string]float64, error) {
	rows, err := conn.Query(ctx, `SELECT query, calls, total_exec_time FROM pg_stat_statements
		WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND calls > 0`)
	if err != nil {
		return nil, err
	}
	type sum struct{ calls, ms float64 }
	sums := map[string]*sum{}
	var query string
	var calls int64
	var ms float64
	_, err = pgx.ForEachRow(rows, []any{&query, &calls, &ms}, func() error {
		if m := callOf.FindStringSubmatch(query); m != nil && !strings.Contains(query, "CREATE") {
			if sums[m[1]] == nil {
				sums[m[1]] = &sum{}
			}
			sums[m[1]].calls += float64(calls)
			sums[m[1]].ms += ms
		}
		return nil
	})
	out := map[string]float64{}
	for name, s := range sums {
		out[name] = s.ms * 1e3 / s.calls
	}
	return out, err
}

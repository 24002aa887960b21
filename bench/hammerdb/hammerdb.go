//go:build unix

package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/dbrig/dbrig/bench/internal/harness"
	"github.com/jackc/pgx/v5"
)

// HammerDB's driving scripts are written here from the dbset, diset and
// vuset commands its documentation lists (see the harness doc); none of
// its text is copied. Its tpcc role's password is HammerDB's documented
// default, on a cluster that listens on loopback only and is removed
// after the run.

// connection is the script's opening: database, benchmark and where.
func connection(port int) string {
	return fmt.Sprintf(`dbset db pg
dbset bm TPC-C
diset connection pg_host 127.0.0.1
diset connection pg_port %d
diset connection pg_sslmode disable
diset tpcc pg_user tpcc
diset tpcc pg_pass tpcc
diset tpcc pg_dbase tpcc
`, port)
}

// buildScript builds the warehouses with HammerDB's PL/pgSQL functions
// (pg_storedprocs false, the mode the runs use), as superuser postgres.
func buildScript(port int, superPass string) string {
	return connection(port) + fmt.Sprintf(`diset tpcc pg_superuser postgres
diset tpcc pg_superuserpass %s
diset tpcc pg_defaultdbase postgres
diset tpcc pg_count_ware %d
diset tpcc pg_num_vu %d
diset tpcc pg_storedprocs false
buildschema
`, superPass, warehouses, vus)
}

// runScript is a timed run of vus virtual users, their output logged
// under TMP (vuset logtotemp), where the window's edges are found.
func runScript(port int, duration time.Duration) string {
	return connection(port) + fmt.Sprintf(`diset tpcc pg_driver timed
diset tpcc pg_rampup %d
diset tpcc pg_duration %d
diset tpcc pg_vacuum false
diset tpcc pg_timeprofile false
diset tpcc pg_raiseerror true
diset tpcc pg_storedprocs false
diset tpcc pg_allwarehouse false
loadscript
vuset vu %d
vuset logtotemp 1
vucreate
vurun
`, int(rampup/time.Minute), int(duration/time.Minute), vus)
}

// hammerdbcli runs script (written to dir) with HammerDB in hdb, its
// temp files and log in dir/tmp and its output in dir/out.txt; wait, if
// not nil, runs beside it (see harness.Watched).
func hammerdbcli(ctx context.Context, hdb, dir, script string, wait func(ctx context.Context, pid int)) (string, error) {
	if err := os.MkdirAll(filepath.Join(dir, "tmp"), 0o700); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "script.tcl")
	if err := os.WriteFile(path, []byte(script), 0o600); err != nil {
		return "", err
	}
	out, err := os.Create(filepath.Join(dir, "out.txt"))
	if err != nil {
		return "", err
	}
	defer out.Close()
	cmd := harness.Command(ctx, filepath.Join(hdb, "hammerdbcli"), "auto", path)
	// hammerdbcli finds its modules and libraries from its own directory.
	cmd.Dir, cmd.Stdout, cmd.Stderr = hdb, out, out
	cmd.Env = append(os.Environ(), "TMP="+filepath.Join(dir, "tmp"))
	_, err = harness.Watched(ctx, cmd, wait)
	b, _ := os.ReadFile(out.Name())
	if err != nil {
		return string(b), fmt.Errorf("%w (its output: %s)", err, out.Name())
	}
	return string(b), nil
}

// buildHammerDB builds HammerDB's warehouses into database tpcc. The
// superuser it needs is a role made for the build, whose password is
// dropped after it: HammerDB echoes its settings, the password too.
func (s *side) buildHammerDB(ctx context.Context, hdb string) error {
	s.db = "tpcc"
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return err
	}
	pass := hex.EncodeToString(b)
	if err := s.admin(ctx, "CREATE ROLE postgres SUPERUSER LOGIN PASSWORD '"+pass+"'"); err != nil {
		return err
	}
	began := time.Now()
	out, err := hammerdbcli(ctx, hdb, filepath.Join(s.scratch.Dir, "hammerdb-build"), buildScript(s.scratch.Server.Port(), pass), nil)
	if err == nil && !strings.Contains(out, "TPCC SCHEMA COMPLETE") {
		err = fmt.Errorf("HammerDB's build did not complete (its output: %s)", filepath.Join(s.scratch.Dir, "hammerdb-build", "out.txt"))
	}
	if dropErr := s.admin(ctx, "ALTER ROLE postgres PASSWORD NULL NOLOGIN"); err == nil {
		err = dropErr
	}
	if err != nil {
		return err
	}
	fmt.Printf("HammerDB build: %.1f s (pg_storedprocs false)\n", time.Since(began).Seconds())
	return nil
}

// admin runs each statement in turn, as the cluster's superuser, in its
// maintenance database.
func (s *side) admin(ctx context.Context, sql ...string) error { return s.in(ctx, "postgres", sql...) }

// in runs each statement in turn in database db.
func (s *side) in(ctx context.Context, db string, sql ...string) error {
	conn, err := pgx.Connect(ctx, s.urlFor(db))
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	for _, stmt := range sql {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			return err
		}
	}
	return nil
}

// The lines HammerDB's monitor virtual user logs as it takes its start
// and end counts (checked against a 4.12 run), and its result.
var (
	startLine  = "Rampup complete, Taking start Transaction Count."
	endLine    = "Test complete, Taking end Transaction Count."
	resultNOPM = regexp.MustCompile(`TEST RESULT : System achieved (?:(\d+) NOPM|.* at (\d+) NOPM)`)
)

// runHammerDB runs HammerDB's timed driver, sampling the server once a
// second (see sampler), and takes the window between the samples where
// its log first shows the start and end lines; by the clock, ramp-up
// and duration from the start, if they never show.
func (s *side) runHammerDB(ctx context.Context, hdb string, pair int, duration time.Duration) (Run, error) {
	r := Run{Started: time.Now().UTC()}
	dir := filepath.Join(s.scratch.Dir, fmt.Sprintf("hammerdb-run-%d", pair))
	smp := &sampler{url: s.urlFor(s.db), pid: s.pid, log: filepath.Join(dir, "tmp", "hammerdb.log")}
	out, err := hammerdbcli(ctx, hdb, dir, runScript(s.scratch.Server.Port(), duration), smp.watch)
	if err != nil {
		return r, err
	}
	if smp.err != nil {
		return r, smp.err
	}
	m := resultNOPM.FindStringSubmatch(out)
	if m == nil {
		return r, fmt.Errorf("HammerDB printed no TEST RESULT (its output: %s)", filepath.Join(dir, "out.txt"))
	}
	r.NOPMTool, _ = strconv.ParseFloat(m[1]+m[2], 64)
	from, to, how := smp.window(rampup, duration)
	if from == nil || to == nil {
		return r, fmt.Errorf("the samples do not cover HammerDB's window (%d samples)", len(smp.samples))
	}
	r.WindowFrom = how
	r.WindowSeconds = to.at.Sub(from.at).Seconds()
	r.NewOrders = to.next - from.next
	r.NOPMDB = float64(r.NewOrders) * 60 / r.WindowSeconds
	r.ServerCPUSeconds = (to.cpu - from.cpu).Seconds()
	return r, nil
}

//go:build unix

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/dbrig/dbrig/bench/internal/harness"
)

// PgbenchFigures is the client reference: pgbench -M prepared calling
// the same five functions dbrig's procs mode calls, in TPC-C's mix
// (45:43:4:4:4), for the same window on the same database, so that the
// server's work, and with it how long each client waits, is close to
// dbrig's: a client that waits longer for each answer wakes from idle
// more often, which costs both tools more per transaction.
type PgbenchFigures struct {
	Clients      int     `json:"clients"`
	Threads      int     `json:"threads"`
	Seconds      float64 `json:"seconds"`
	Transactions int64   `json:"transactions"`
	Failed       int64   `json:"failed"`
	CPUSeconds   float64 `json:"client_cpu_seconds"`
	// ClientMicros is pgbench's CPU per transaction, in microseconds.
	ClientMicros float64 `json:"client_us_per_tx"`
}

// The scripts give each client a home warehouse, as dbrig's VUs have, so
// that clients do not deadlock on each other's stock rows; ten lines per
// order is the mean of TPC-C's 5 to 15. The arrays go as 30 parameters,
// since pgbench has no array variables: pgbench's client encodes more
// parameters than dbrig's, which favours dbrig a little. Customers are
// chosen by number, never by name, which gives the server a little less
// work than dbrig's 60% by name.
var pgbenchScripts = []struct{ name, weight, body string }{
	{"neword.sql", "45", `\set w :client_id % :warehouses + 1
\set d random(1, 10)
\set c random(1, 3000)
` + itemVars() + `SELECT order_id, total_amount::float8 FROM tprocc_neword(:w, :d, :c, ARRAY[` + list(":i%d::int") + `], ARRAY[` + list(":w::int") + `], ARRAY[` + list(":q%d::int") + `], now()::timestamp);
`},
	{"payment.sql", "43", `\set w :client_id % :warehouses + 1
\set d random(1, 10)
\set c random(1, 3000)
\set amount random(100, 500000) / 100.0
SELECT cust_id, cust_balance::float8 FROM tprocc_payment(:w, :d, :w, :d, :c, false, '', :amount, now()::timestamp);
`},
	{"ostat.sql", "4", `\set w :client_id % :warehouses + 1
\set d random(1, 10)
\set c random(1, 3000)
SELECT cust_id, coalesce(order_id, 0), coalesce(cardinality(line_items), 0) FROM tprocc_ostat(:w, :d, :c, false, '');
`},
	{"delivery.sql", "4", `\set w :client_id % :warehouses + 1
\set carrier random(1, 10)
SELECT tprocc_delivery(:w, :carrier, now()::timestamp);
`},
	{"slev.sql", "4", `\set w :client_id % :warehouses + 1
\set d random(1, 10)
\set threshold random(10, 20)
SELECT tprocc_slev(:w, :d, :threshold);
`},
}

func itemVars() string {
	var b strings.Builder
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&b, "\\set i%d random(1, 100000)\n\\set q%d random(1, 10)\n", i, i)
	}
	return b.String()
}

// list is ten items of format, numbered from 1 where it takes a number.
func list(format string) string {
	items := make([]string, 10)
	for i := range items {
		if strings.Contains(format, "%d") {
			items[i] = fmt.Sprintf(format, i+1)
		} else {
			items[i] = format
		}
	}
	return strings.Join(items, ", ")
}

var (
	processedRE = regexp.MustCompile(`number of transactions actually processed: (\d+)`)
	failedRE    = regexp.MustCompile(`number of failed transactions: (\d+)`)
)

// runPgbench runs the reference with vus clients on threads threads for the window on url's
// database, which holds tproc-c's functions, and measures pgbench's CPU.
// pgBin is the server's bin directory, "" for pgbench on PATH.
func runPgbench(ctx context.Context, pgBin, dir, url string, vus, threads, warehouses int, window time.Duration) (*PgbenchFigures, error) {
	var args []string
	for _, s := range pgbenchScripts {
		path := filepath.Join(dir, s.name)
		if err := os.WriteFile(path, []byte(s.body), 0o644); err != nil {
			return nil, err
		}
		args = append(args, "-f", path+"@"+s.weight)
	}
	f := &PgbenchFigures{Clients: vus, Threads: threads, Seconds: window.Seconds()}
	args = append(args, "-n", "-M", "prepared", "-c", strconv.Itoa(vus), "-j", strconv.Itoa(f.Threads),
		"-T", strconv.Itoa(int(window.Seconds())), "--max-tries", "10", "-D", "warehouses="+strconv.Itoa(warehouses), url)
	fmt.Printf("\n== Reference: pgbench -M prepared, %d clients, -j %d, the five functions 45:43:4:4:4, %s\n", vus, threads, window)
	cmd := harness.Command(ctx, filepath.Join(pgBin, "pgbench"), args...)
	if pgBin == "" {
		cmd = harness.Command(ctx, "pgbench", args...)
	}
	var out strings.Builder
	cmd.Stdout = &out
	_, cpu, err := harness.Timed(ctx, cmd)
	if err != nil {
		return nil, err
	}
	m := processedRE.FindStringSubmatch(out.String())
	if m == nil {
		return nil, fmt.Errorf("pgbench printed no transaction count:\n%s", out.String())
	}
	f.Transactions, _ = strconv.ParseInt(m[1], 10, 64)
	if m := failedRE.FindStringSubmatch(out.String()); m != nil {
		f.Failed, _ = strconv.ParseInt(m[1], 10, 64)
	}
	if f.Transactions == 0 {
		return nil, fmt.Errorf("pgbench processed no transactions:\n%s", out.String())
	}
	f.CPUSeconds = cpu.Seconds()
	f.ClientMicros = f.CPUSeconds * 1e6 / float64(f.Transactions)
	fmt.Printf("pgbench: %d transactions (%d failed), %.2f CPU s = %.1f µs per transaction\n",
		f.Transactions, f.Failed, f.CPUSeconds, f.ClientMicros)
	return f, nil
}

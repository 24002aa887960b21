//go:build unix

package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/dbrig/dbrig/bench/internal/harness"
	"github.com/dbrig/dbrig/internal/human"
)

// Run is one run's figures.
type Run struct {
	Pair int    `json:"pair"`
	Mode string `json:"mode"`
	// NOPM and TPM are the database's counts where the result has them,
	// else the client's.
	NOPM   float64 `json:"nopm"`
	TPM    float64 `json:"tpm"`
	FromDB bool    `json:"from_db"`
	// ClientMicros and ServerMicros are CPU per transaction: the dbrig
	// process's, and mariadbd's over the same span, over the window's
	// transactions by the client's count.
	ClientMicros float64 `json:"client_us_per_tx"`
	ServerMicros float64 `json:"server_us_per_tx"`
	Errors       int64   `json:"errors"`
}

// runOnce runs dbrig run tproc-c in mode, without ramp-up, reading the
// server's CPU at the process's edges.
func runOnce(ctx context.Context, dbrig, url string, pid int, jsonPath, mode string, o options) (Run, error) {
	r := Run{Mode: mode}
	fmt.Printf("\n== Run: --mode %s, %d VUs, %s\n", mode, o.vus, o.duration)
	before := cpuOf(pid)
	_, clientCPU, err := harness.Timed(ctx, harness.Command(ctx, dbrig, "run", "tproc-c", "--target", url,
		"--vus", strconv.Itoa(o.vus), "--rampup", "0s", "--duration", o.duration.String(),
		"--mode", mode, "--no-telemetry", "--json", jsonPath))
	serverCPU := cpuOf(pid) - before
	if err != nil {
		return r, err
	}
	c, err := harness.ReadCounts(jsonPath, mode)
	if err != nil {
		return r, err
	}
	r.NOPM, r.TPM, r.FromDB, r.Errors = c.NOPM, c.TPM, c.FromDB, c.Errors
	txs := c.TPMClient * c.WindowSeconds / 60
	r.ClientMicros = float64(clientCPU.Microseconds()) / txs
	r.ServerMicros = float64(serverCPU.Microseconds()) / txs
	return r, nil
}

// cpuOf is pid's CPU time so far, or 0 where it cannot be read.
func cpuOf(pid int) time.Duration {
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if s := harness.SampleProc(done, pid, time.Second); len(s) > 0 {
		return s[0].CPU
	}
	return 0
}

// printFigures prints the runs, each pair's ratios sql / procs and their
// medians, and returns the median of the NOPM ratio.
func printFigures(w io.Writer, fig Figures) float64 {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "\npair\tmode\tNOPM\tTPM\tclient µs/tx\tserver µs/tx\terrors\t\n")
	for _, r := range fig.Runs {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%.0f\t%.0f\t%d\t\n", r.Pair, r.Mode, human.Thousands(r.NOPM), human.Thousands(r.TPM),
			r.ClientMicros, r.ServerMicros, r.Errors)
	}
	tw.Flush()
	var nopm, client, server []float64
	for i := 0; i+1 < len(fig.Runs); i += 2 {
		procs, sql := fig.Runs[i], fig.Runs[i+1]
		if procs.Mode != "procs" {
			procs, sql = sql, procs
		}
		nopm = append(nopm, sql.NOPM/procs.NOPM)
		client = append(client, sql.ClientMicros/procs.ClientMicros)
		server = append(server, sql.ServerMicros/procs.ServerMicros)
	}
	fmt.Fprintf(tw, "\nsql / procs\tper pair\tmedian\ttarget\t\n")
	row := func(what string, ratios []float64, target string) float64 {
		m := median(ratios)
		fmt.Fprintf(tw, "%s\t%s\t%.2f\t%s\t\n", what, list(ratios), m, target)
		return m
	}
	m := row("NOPM", nopm, fmt.Sprintf("≥ %.2f: %s", targetSQLNOPM, map[bool]string{true: "met", false: "NOT MET"}[median(nopm) >= targetSQLNOPM]))
	row("client CPU per transaction", client, "")
	row("server CPU per transaction", server, "")
	fmt.Fprintf(tw, "consistency check after the runs\t%s\t\t\t\n", map[bool]string{true: "passed", false: "FAILED"}[fig.CheckPassed])
	tw.Flush()
	return m
}

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func list(xs []float64) string {
	var b []byte
	for i, x := range xs {
		if i > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendFloat(b, x, 'f', 2, 64)
	}
	return string(b)
}

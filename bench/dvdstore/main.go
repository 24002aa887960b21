//go:build unix

// Command dvdstore measures `dbrig build dvd-store` against a raw binary
// COPY of the same tables (plus the same keys, sequences, functions and
// ANALYZE) in the same run, on the same server, and prints the ratio.
//
// Both sides do the same work but for making the rows: the build creates
// its PL/pgSQL functions and sets its sequences after the keys, so the
// reference does too (its "finish" phase). Only the build's time covers
// starting dbrig, creating the empty tables and recording what it built:
// milliseconds. Dropping the last pair's tables is timed by neither. It
// is a benchmark, not a test: it fails only when something does not
// work. bench/dvdstore.sh builds dbrig and runs it; see -help for the
// flags.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"text/tabwriter"

	"github.com/dbrig/dbrig/bench/internal/harness"
	"github.com/dbrig/dbrig/internal/human"
	"github.com/dbrig/dbrig/internal/workload"
	"github.com/jackc/pgx/v5"
)

// sqlDir holds dvd-store's SQL: the generic blocks and PostgreSQL's own.
const sqlDir = "internal/workload/dvdstore/sql"

// tables is every table the schema's "tables" block creates; the export
// and the row check both cover all of them.
var tables = []string{"ds_customers", "ds_cust_hist", "ds_orders", "ds_orderlines", "ds_products",
	"ds_inventory", "ds_categories", "ds_reorder", "dbrig_dvdstore"}

// splitBy names the id column a big table's files are cut along, and the
// table whose max id bounds it: the build loads these tables in jobs of
// id ranges, so the reference loads them in files of id ranges, which
// spread over the connections as the jobs spread over the loaders.
var splitBy = map[string]struct{ column, maxOf string }{
	"ds_customers":  {"customerid", "ds_customers"},
	"ds_orders":     {"orderid", "ds_orders"},
	"ds_orderlines": {"orderid", "ds_orders"},
	"ds_cust_hist":  {"orderid", "ds_orders"},
}

// idsPerFile is the width of one file's id range: a few files per table
// at size M, enough for 2 connections to finish together.
const idsPerFile = 250_000

type options struct {
	harness.Common
	target  string
	copyDir string
	size    string
	loaders int
	pairs   int
}

// Figures is what --json writes.
type Figures struct {
	harness.ServerFigures
	Size    string `json:"size"`
	Loaders int    `json:"loaders"`
	Pairs   []Pair `json:"pairs"`
}

// Pair is one build and the raw COPY reference after it.
type Pair struct {
	BuildSeconds  float64             `json:"build_seconds"`
	Raw           *harness.RawFigures `json:"raw_copy"`
	BuildRawRatio float64             `json:"build_raw_ratio"`
}

func main() {
	var o options
	fs := flag.CommandLine
	o.Flags(fs)
	fs.StringVar(&o.target, "target", "", "measure on this PostgreSQL database (URL) instead of a server of our own; its dvd-store tables are dropped, and a database rawcopy is created and dropped beside it")
	fs.StringVar(&o.copyDir, "copy-dir", "", "with --target: a directory on the server's machine that the server can write and read, for the raw COPY's files")
	fs.StringVar(&o.size, "size", "M", "dvd-store --size to build")
	fs.IntVar(&o.loaders, "loaders", runtime.NumCPU(), "parallel loaders for the build, and connections for the raw COPY")
	fs.IntVar(&o.pairs, "pairs", 1, "how many times to build and then raw COPY")
	flag.Parse()
	switch {
	case flag.NArg() > 0:
		fmt.Fprintf(os.Stderr, "dvdstore: unexpected argument %q; see -help\n", flag.Arg(0))
		os.Exit(2)
	case o.loaders < 1 || o.pairs < 1:
		fmt.Fprintln(os.Stderr, "dvdstore: --loaders and --pairs must be at least 1")
		os.Exit(2)
	case o.target != "" && (o.Socket || o.copyDir == ""):
		fmt.Fprintln(os.Stderr, "dvdstore: with --target, give --copy-dir and put any socket in the URL")
		os.Exit(2)
	case o.target == "" && o.copyDir != "":
		fmt.Fprintln(os.Stderr, "dvdstore: --copy-dir is for --target; a server of our own gets one in the temp dir")
		os.Exit(2)
	}
	harness.Main("dvdstore", func(ctx context.Context) error { return run(ctx, o) })
}

func run(ctx context.Context, o options) (err error) {
	scratch, dbrig, sql, err := o.Setup(ctx, "dvdstore", sqlDir, "schema.sql", "procs.sql")
	if err != nil {
		return err
	}
	defer func() { err = scratch.Close(o.Keep, err) }()
	schema, procs := sql[0], sql[1]

	// 1. The server, the database to build in, and the raw COPY's.
	raw := harness.RawCopy{DB: "rawcopy", Schema: schema, Tables: tables, Conns: o.loaders,
		Finish: finish(schema, procs)}
	var server harness.ServerFigures
	if o.target == "" {
		if raw.URLFor, server, err = scratch.TunedServer(ctx, o.PgBin, o.Socket); err != nil {
			return err
		}
		raw.Admin, raw.Source = scratch.Server, raw.URLFor("bench")
		if err := scratch.Server.CreateDB(ctx, "bench"); err != nil {
			return err
		}
		raw.Dir = filepath.Join(scratch.Dir, "copy")
		if err := harness.ServerDir(raw.Dir, filepath.Join(scratch.Server.Dir, "data")); err != nil {
			return err
		}
	} else {
		if server, err = harness.TargetServer(ctx, o.target); err != nil {
			return err
		}
		t := targetDB(o.target)
		raw.Admin, raw.URLFor, raw.Source, raw.Dir = t, t.urlFor, o.target, o.copyDir
	}
	fig := &Figures{ServerFigures: server, Size: o.size, Loaders: o.loaders}

	// 2. The pairs: each build starts from no tables, and each reference
	// reloads what that build made.
	for i := 1; i <= o.pairs; i++ {
		p, err := pair(ctx, dbrig, raw, o, i)
		if err != nil {
			return err
		}
		fig.Pairs = append(fig.Pairs, p)
	}

	// 3. The figures.
	fmt.Println()
	printTable(os.Stdout, fig)
	return harness.WriteFigures(o.JSON, fig)
}

// finish is what the build runs after its keys and before ANALYZE, in
// its order: the functions, then the sequences.
func finish(schema, procs workload.SQLFile) []string {
	var out []string
	for _, name := range procs.Named("proc:") {
		out = append(out, procs.Get(name))
	}
	return append(out, schema.Statements("sequences")...)
}

// pair times one build and the raw COPY of what it made.
func pair(ctx context.Context, dbrig string, raw harness.RawCopy, o options, i int) (Pair, error) {
	var p Pair
	// Dropping the last build's tables is not the build's work: done
	// here, untimed, so no --force is needed.
	if err := execAll(ctx, raw.Source, raw.Schema.Statements("drop")); err != nil {
		return p, fmt.Errorf("dropping the tables: %w", err)
	}
	if err := harness.Checkpoint(ctx, raw.Source); err != nil {
		return p, err
	}
	fmt.Printf("\n== Pair %d of %d: build, size %s, %d loaders\n", i, o.pairs, o.size, o.loaders)
	wall, _, err := harness.Timed(ctx, harness.Command(ctx, dbrig, "build", "dvd-store", "--target", raw.Source,
		"--size", o.size, "--loaders", strconv.Itoa(o.loaders)))
	if err != nil {
		return p, err
	}
	p.BuildSeconds = wall.Seconds()
	fmt.Printf("Build: %.1f s wall clock\n", p.BuildSeconds)

	fmt.Printf("\n== Pair %d of %d: raw COPY reference, binary COPY from server-side files, keys, sequences, functions and ANALYZE, %d connections\n",
		i, o.pairs, o.loaders)
	if raw.Split, err = split(ctx, raw.Source); err != nil {
		return p, err
	}
	if err := harness.Checkpoint(ctx, raw.Source); err != nil {
		return p, err
	}
	if p.Raw, err = raw.Run(ctx); err != nil {
		return p, fmt.Errorf("raw COPY reference: %w", err)
	}
	p.BuildRawRatio = p.BuildSeconds / p.Raw.Seconds
	fmt.Println(p.Raw)
	fmt.Printf("Build / raw COPY: %.2f\n", p.BuildRawRatio)
	return p, nil
}

// split cuts the tables of splitBy into files of idsPerFile ids, up to
// the max id the build made.
func split(ctx context.Context, url string) (func(table string) []string, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	maxID := map[string]int64{}
	for _, s := range splitBy {
		var n int64
		q := fmt.Sprintf("SELECT coalesce(max(%s), 0) FROM %s", s.column, s.maxOf)
		if err := conn.QueryRow(ctx, q).Scan(&n); err != nil {
			return nil, err
		}
		maxID[s.maxOf] = n
	}
	return splitFunc(maxID), nil
}

// splitFunc cuts the tables of splitBy by the max ids of the tables they
// are bounded by.
func splitFunc(maxID map[string]int64) func(table string) []string {
	return func(table string) []string {
		s, ok := splitBy[table]
		if !ok {
			return nil
		}
		var where []string
		for from := int64(1); from <= maxID[s.maxOf]; from += idsPerFile {
			where = append(where, fmt.Sprintf("%s BETWEEN %d AND %d", s.column, from, from+idsPerFile-1))
		}
		return where
	}
}

// execAll runs stmts in order on one connection to url.
func execAll(ctx context.Context, url string, stmts []string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	for _, stmt := range stmts {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			return err
		}
	}
	return nil
}

// targetDB creates and drops databases beside the one a --target URL
// names, on the same server, as that URL's user.
type targetDB string

func (t targetDB) CreateDB(ctx context.Context, name string) error {
	return execAll(ctx, string(t), []string{"CREATE DATABASE " + pgx.Identifier{name}.Sanitize()})
}

func (t targetDB) DropDB(ctx context.Context, name string) error {
	return execAll(ctx, string(t), []string{"DROP DATABASE IF EXISTS " + pgx.Identifier{name}.Sanitize() + " WITH (FORCE)"})
}

// urlFor is the target's URL with the database name replaced; a URL that
// does not parse is returned as it is, and the connection then fails
// with pgx's own message.
func (t targetDB) urlFor(db string) string {
	u, err := url.Parse(string(t))
	if err != nil || u.Scheme == "" {
		return string(t)
	}
	u.Path = "/" + db
	return u.String()
}

// printTable prints each pair's figures, and over all pairs the ratio
// of the total times.
func printTable(w io.Writer, f *Figures) {
	fmt.Fprintf(w, "== Figures: dvd-store --size %s, %d loaders, %s, %s\n", f.Size, f.Loaders, f.Connection, human.FirstLine(f.ServerVersion))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "pair\tbuild (s)\traw COPY (s)\tCOPY\tkeys\tsequences, functions\tANALYZE\tbuild / raw")
	var build, rawSum float64
	for i, p := range f.Pairs {
		r := p.Raw
		fmt.Fprintf(tw, "%d\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.2f\n", i+1, p.BuildSeconds, r.Seconds,
			r.CopySeconds, r.KeysSeconds, r.FinishSeconds, r.AnalyzeSeconds, p.BuildRawRatio)
		build, rawSum = build+p.BuildSeconds, rawSum+r.Seconds
	}
	if len(f.Pairs) > 1 {
		fmt.Fprintf(tw, "all\t%.1f\t%.1f\t\t\t\t\t%.2f\n", build, rawSum, build/rawSum)
	}
	tw.Flush()
	fmt.Fprintln(w, harness.SettingsLine(f.Settings))
}

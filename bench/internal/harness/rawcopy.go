//go:build unix

package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/dbrig/dbrig/internal/human"
	"github.com/dbrig/dbrig/internal/workload"
	"github.com/jackc/pgx/v5"
)

// DBAdmin creates and drops databases: a server of the benchmark's own
// (postgres.Server), or a connection to a target it was given.
type DBAdmin interface {
	CreateDB(ctx context.Context, name string) error
	// DropDB drops the database if it exists.
	DropDB(ctx context.Context, name string) error
}

// RawCopy is the reference a build is measured against: the fastest way
// PostgreSQL knows to load the rows the build made. Binary COPY from
// server-side files (no client, no parsing of text, no network), then the
// same keys over the same number of connections, then ANALYZE (per table
// over those connections, where the schema has a statement for one
// table, as the build can). The files
// are exported from the built database untimed; the load goes into a
// fresh database.
type RawCopy struct {
	// Source is the URL of the built database.
	Source string
	// Admin makes the fresh database DB, which URLFor names the URL of.
	Admin  DBAdmin
	DB     string
	URLFor func(db string) string
	// Dir is where the files go, on the server's machine: the server
	// writes and reads them as its own user (see ServerDir). Run removes
	// the files it made.
	Dir string
	// Schema has the blocks "tables" (which must create Tables and
	// nothing with data), "keys" and "analyze", and perhaps
	// "analyze_table".
	Schema workload.SQLFile
	Tables []string
	// Split gives, for a table, the WHERE conditions of its files, one
	// file each, so that a big table loads over several connections as
	// the build loads it in several jobs. Nil, or no conditions: the
	// table is one file.
	Split func(table string) []string
	// Conns is the connections for the export, the load and the keys:
	// the build's loaders.
	Conns int
	// Finish are statements the build runs after its keys and before
	// ANALYZE (setting sequences, creating functions): timed here too,
	// so the reference does all the build does but make the rows.
	Finish []string
	// ServerCPU, when set, reads the server's CPU so far (TreeCPU of its
	// postmaster): the reference's is taken over its timed steps.
	ServerCPU func() (time.Duration, error)
}

// RawFigures times the raw binary COPY reference.
type RawFigures struct {
	Seconds        float64 `json:"seconds"`
	CopySeconds    float64 `json:"copy_seconds"`
	KeysSeconds    float64 `json:"keys_seconds"`
	FinishSeconds  float64 `json:"finish_seconds,omitempty"`
	AnalyzeSeconds float64 `json:"analyze_seconds"`
	// ServerCPUSeconds is the server's CPU over the timed steps, 0 when
	// not measured.
	ServerCPUSeconds float64 `json:"server_cpu_seconds,omitempty"`
	Files            int     `json:"files"`
	Bytes            int64   `json:"bytes"`
	Rows             int64   `json:"rows"`
}

// String is the line the benchmarks print.
func (r *RawFigures) String() string {
	finish := ""
	if r.FinishSeconds > 0 {
		finish = fmt.Sprintf(", sequences and functions %.1f s", r.FinishSeconds)
	}
	cpu := ""
	if r.ServerCPUSeconds > 0 {
		cpu = fmt.Sprintf(", the server's CPU %.1f s", r.ServerCPUSeconds)
	}
	return fmt.Sprintf("Raw COPY: %.1f s (COPY %.1f s, keys %.1f s%s, ANALYZE %.1f s%s); %d files, %.0f MB, %d rows",
		r.Seconds, r.CopySeconds, r.KeysSeconds, finish, r.AnalyzeSeconds, cpu, r.Files, float64(r.Bytes)/1e6, r.Rows)
}

// ServerDir makes dir for RawCopy's files, owned by whoever owns the
// cluster's data directory dataDir, since the server reads and writes
// them as its own user.
func ServerDir(dir, dataDir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil {
		return err
	}
	fi, err := os.Stat(dataDir)
	if err != nil {
		return err
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return os.Chown(dir, int(st.Uid), int(st.Gid))
	}
	return nil
}

// exportFile is one server-side file of the raw COPY reference.
type exportFile struct {
	table string
	path  string
	size  int64
}

// Run exports, loads, checks that the fresh database holds as many rows
// per table as the built one, and drops it again: whatever is measured
// next should see the server as if the reference had never been there,
// sharing neither its cache nor its checkpoints.
func (r RawCopy) Run(ctx context.Context) (*RawFigures, error) {
	raw := &RawFigures{}
	files, err := r.export(ctx)
	defer func() {
		for _, f := range files {
			os.Remove(f.path)
		}
	}()
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	for _, f := range files {
		raw.Bytes += f.size
	}
	raw.Files = len(files)

	if err := r.Admin.DropDB(ctx, r.DB); err != nil {
		return nil, err
	}
	if err := r.Admin.CreateDB(ctx, r.DB); err != nil {
		return nil, err
	}
	rawURL := r.URLFor(r.DB)
	if err := parallelExec(ctx, rawURL, 1, r.Schema.Statements("tables")); err != nil {
		return nil, fmt.Errorf("create tables: %w", err)
	}
	if err := Checkpoint(ctx, rawURL); err != nil {
		return nil, err
	}

	// Biggest first, each connection taking the next file when it is
	// done: the longest files do not end up last, on one connection.
	sort.SliceStable(files, func(i, j int) bool { return files[i].size > files[j].size })
	load := make([]string, len(files))
	for i, f := range files {
		load[i] = fmt.Sprintf("COPY %s FROM %s (FORMAT binary)", f.table, quote(f.path))
	}
	conns, err := connectN(ctx, rawURL, r.Conns)
	if err != nil {
		return nil, err
	}
	defer func() { closeAll(ctx, conns) }()
	cpu0, err := r.serverCPU()
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	if err := parallelOn(ctx, conns, load); err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	t1 := time.Now()
	if err := parallelOn(ctx, conns, r.Schema.Statements("keys")); err != nil {
		return nil, fmt.Errorf("keys: %w", err)
	}
	t2 := time.Now()
	// Without Finish, its time stays exactly 0, and is not shown.
	t3 := t2
	if len(r.Finish) > 0 {
		if err := parallelOn(ctx, conns[:1], r.Finish); err != nil {
			return nil, err
		}
		t3 = time.Now()
	}
	if err := parallelOn(ctx, conns, r.analyze(files)); err != nil {
		return nil, fmt.Errorf("analyze: %w", err)
	}
	t4 := time.Now()
	cpu4, err := r.serverCPU()
	if err != nil {
		return nil, err
	}
	raw.ServerCPUSeconds = (cpu4 - cpu0).Seconds()
	raw.CopySeconds, raw.KeysSeconds, raw.FinishSeconds = t1.Sub(t0).Seconds(), t2.Sub(t1).Seconds(), t3.Sub(t2).Seconds()
	raw.AnalyzeSeconds, raw.Seconds = t4.Sub(t3).Seconds(), t4.Sub(t0).Seconds()

	// The reference only counts if it loaded every row the build did.
	if raw.Rows, err = r.compareRows(ctx, conns[0]); err != nil {
		return nil, err
	}
	closeAll(ctx, conns)
	conns = nil
	if err := r.Admin.DropDB(ctx, r.DB); err != nil {
		return nil, err
	}
	return raw, nil
}

// serverCPU is ServerCPU's reading, 0 without it.
func (r RawCopy) serverCPU() (time.Duration, error) {
	if r.ServerCPU == nil {
		return 0, nil
	}
	return r.ServerCPU()
}

// analyze is the schema's "analyze" statement, on one connection, or,
// where it has an "analyze_table" block ({table} in it names the table),
// that statement for each table, the biggest first, over all the
// connections, as a build with its loaders runs it.
func (r RawCopy) analyze(files []exportFile) []string {
	if _, ok := r.Schema["analyze_table"]; !ok {
		return []string{r.Schema.Get("analyze")}
	}
	size := map[string]int64{}
	for _, f := range files {
		size[f.table] += f.size
	}
	tables := slices.Clone(r.Tables)
	sort.SliceStable(tables, func(i, j int) bool { return size[tables[i]] > size[tables[j]] })
	stmts := make([]string, len(tables))
	for i, t := range tables {
		stmts[i] = strings.ReplaceAll(r.Schema.Get("analyze_table"), "{table}", t)
	}
	return stmts
}

// export writes the files, over the same number of connections the load
// will use, and says how long it took (not part of the reference). It
// returns the files made, even on an error, for the caller to remove.
func (r RawCopy) export(ctx context.Context) ([]exportFile, error) {
	began := time.Now()
	var files []exportFile
	var export []string
	for _, t := range r.Tables {
		var where []string
		if r.Split != nil {
			where = r.Split(t)
		}
		if len(where) == 0 {
			f := exportFile{table: t, path: filepath.Join(r.Dir, t+".bin")}
			files = append(files, f)
			export = append(export, fmt.Sprintf("COPY %s TO %s (FORMAT binary)", t, quote(f.path)))
			continue
		}
		for i, cond := range where {
			f := exportFile{table: t, path: filepath.Join(r.Dir, fmt.Sprintf("%s.%d.bin", t, i+1))}
			files = append(files, f)
			export = append(export, fmt.Sprintf("COPY (SELECT * FROM %s WHERE %s) TO %s (FORMAT binary)", t, cond, quote(f.path)))
		}
	}
	if err := parallelExec(ctx, r.Source, r.Conns, export); err != nil {
		return files, err
	}
	var bytes int64
	for i := range files {
		fi, err := os.Stat(files[i].path)
		if err != nil {
			return files, err
		}
		files[i].size = fi.Size()
		bytes += fi.Size()
	}
	fmt.Printf("Exported %d files, %.0f MB, in %.1f s (not timed)\n", len(files), float64(bytes)/1e6, time.Since(began).Seconds())
	return files, nil
}

// compareRows checks that the reference holds as many rows per table as
// the built database, and returns the total.
func (r RawCopy) compareRows(ctx context.Context, rawConn *pgx.Conn) (int64, error) {
	built, err := pgx.Connect(ctx, r.Source)
	if err != nil {
		return 0, err
	}
	defer built.Close(context.WithoutCancel(ctx))
	var total int64
	for _, t := range r.Tables {
		q := "SELECT count(*) FROM " + t
		var want, got int64
		if err := built.QueryRow(ctx, q).Scan(&want); err != nil {
			return 0, err
		}
		if err := rawConn.QueryRow(ctx, q).Scan(&got); err != nil {
			return 0, err
		}
		if want != got {
			return 0, fmt.Errorf("table %s: the build has %d rows, the raw COPY %d", t, want, got)
		}
		total += got
	}
	return total, nil
}

// quote makes a string literal for a file path; COPY takes no parameters.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func connectN(ctx context.Context, url string, n int) ([]*pgx.Conn, error) {
	var conns []*pgx.Conn
	for range n {
		c, err := pgx.Connect(ctx, url)
		if err != nil {
			closeAll(ctx, conns)
			return nil, err
		}
		conns = append(conns, c)
	}
	return conns, nil
}

func closeAll(ctx context.Context, conns []*pgx.Conn) {
	for _, c := range conns {
		c.Close(context.WithoutCancel(ctx))
	}
}

// parallelExec runs stmts over n fresh connections; see parallelOn.
func parallelExec(ctx context.Context, url string, n int, stmts []string) error {
	conns, err := connectN(ctx, url, min(n, max(len(stmts), 1)))
	if err != nil {
		return err
	}
	defer closeAll(ctx, conns)
	return parallelOn(ctx, conns, stmts)
}

// parallelOn runs stmts in order, each connection taking the next one
// when it is free, as the build's loaders do. The first error cancels
// the rest, and a cancelled ctx is an error even between statements.
func parallelOn(ctx context.Context, conns []*pgx.Conn, stmts []string) error {
	return workload.Spread(ctx, len(conns), stmts, func(ctx context.Context, i int, next <-chan string) error {
		for stmt := range next {
			if _, err := conns[i].Exec(ctx, stmt); err != nil {
				return fmt.Errorf("%s: %w", human.FirstLine(stmt), err)
			}
		}
		return nil
	})
}

//go:build unix

package harness

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	pgtarget "github.com/dbrig/dbrig/internal/dbtarget/postgres"
	"github.com/dbrig/dbrig/internal/workload"
)

// Common are the flags the build benchmarks (tprocc, dvdstore) share.
type Common struct {
	Dbrig, Repo, PgBin, BaseDir, JSON string
	Socket, Keep                      bool
	// Reuse, when set, is a dir kept across runs (see KeptScratch)
	// instead of a temp dir; a benchmark binds its own flag to it.
	Reuse string
}

// Flags binds c to its flags in fs.
func (c *Common) Flags(fs *flag.FlagSet) {
	fs.StringVar(&c.Dbrig, "dbrig", "", "dbrig binary to measure (default: go build ./cmd/dbrig into the temp dir)")
	fs.StringVar(&c.Repo, "repo", "", "repository root, for the schema file (default: found from the working directory)")
	fs.StringVar(&c.PgBin, "pg-bin", "", "directory of postgres, initdb and pg_ctl (default: $PG_BIN, pg_config, PATH)")
	fs.StringVar(&c.BaseDir, "dir", "", "where the temp dir for the server goes (default: $TMPDIR or /tmp)")
	fs.StringVar(&c.JSON, "json", "", "also write the figures as JSON to this file")
	fs.BoolVar(&c.Socket, "socket", false, "connect over the unix socket instead of TCP loopback 127.0.0.1")
	fs.BoolVar(&c.Keep, "keep", false, "keep the temp dir (server stopped) for inspection")
}

// Setup finds the repository, makes the scratch dir and the dbrig to
// measure, and reads the workload's SQL files from sqlDir (see RepoSQL),
// in the order given. On success the caller closes the scratch dir,
// deferred as `err = scratch.Close(c.Keep, err)`.
func (c Common) Setup(ctx context.Context, name, sqlDir string, files ...string) (scratch *Scratch, dbrig string, sql []workload.SQLFile, err error) {
	repo, err := FindRepo(c.Repo)
	if err != nil {
		return nil, "", nil, err
	}
	for _, file := range files {
		f, err := RepoSQL(repo, sqlDir, file)
		if err != nil {
			return nil, "", nil, err
		}
		sql = append(sql, f)
	}
	if c.Reuse != "" {
		scratch, err = KeptScratch(name, c.Reuse)
	} else {
		scratch, err = NewScratch(name, c.BaseDir)
	}
	if err != nil {
		return nil, "", nil, err
	}
	if dbrig, err = scratch.Dbrig(ctx, c.Dbrig, repo); err != nil {
		return nil, "", nil, scratch.Close(c.Keep, err)
	}
	return scratch, dbrig, sql, nil
}

// RepoSQL reads a workload's SQL file from the checkout in repo (see
// FindRepo when empty) as the build does: the generic blocks under
// PostgreSQL's own.
func RepoSQL(repo, dir, file string) (workload.SQLFile, error) {
	repo, err := FindRepo(repo)
	if err != nil {
		return nil, err
	}
	f, err := workload.LoadSQL(os.DirFS(repo), dir, pgtarget.Dialect, file)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", file, err)
	}
	return f, nil
}

// ServerFigures open a build benchmark's figures: when, and on what.
type ServerFigures struct {
	StartedAt     time.Time         `json:"started_at"`
	ServerVersion string            `json:"server_version"`
	Settings      map[string]string `json:"settings"`
	Connection    string            `json:"connection"`
	CPUs          int               `json:"cpus"`
}

// ParseCounts reads a comma-separated list of positive counts.
func ParseCounts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive count", f)
		}
		out = append(out, n)
	}
	return out, nil
}

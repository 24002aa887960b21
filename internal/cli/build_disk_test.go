//go:build linux

package cli_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/dbrig/dbrig/internal/server/postgres/pgtest"
	"github.com/dbrig/dbrig/internal/server/servertest"
	"github.com/jackc/pgx/v5"
)

// smallDisk is a servertest.SmallDisk that a test fills with a file of
// its own but for the room it leaves, so that a build runs out of room
// where the test chooses.
type smallDisk struct {
	t      *testing.T
	dir    string
	filler string
}

func newSmallDisk(t *testing.T, size int64) smallDisk {
	dir := servertest.SmallDisk(t, size)
	return smallDisk{t: t, dir: dir, filler: filepath.Join(dir, "filler")}
}

// leave fills the disk but for free bytes (whole pages).
func (d smallDisk) leave(free int64) {
	d.t.Helper()
	f, err := os.OpenFile(d.filler, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		d.t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 1<<20)
	for {
		if _, err := f.Write(chunk); errors.Is(err, syscall.ENOSPC) {
			break
		} else if err != nil {
			d.t.Fatal(err)
		}
	}
	fi, err := f.Stat()
	if err != nil {
		d.t.Fatal(err)
	}
	const page = 4096
	if err := f.Truncate(max(fi.Size()/page*page-free, 0)); err != nil {
		d.t.Fatal(err)
	}
}

// free gives back all the filler's room.
func (d smallDisk) free() {
	d.t.Helper()
	if err := os.Remove(d.filler); err != nil {
		d.t.Fatal(err)
	}
}

// buildOnFullDisk: a build that runs out of room, wherever it does, leaves
// only what dbrig can clear itself: `build --force` never refuses what
// the build made as the user's, `drop` clears it once there is room to
// write, and a build then succeeds. tables counts the tables left on u.
func buildOnFullDisk(t *testing.T, u string, disk smallDisk, tables string) {
	build := []string{"build", "tproc-c", "--target", u, "--warehouses", "1", "--loaders", "1"}
	// fails wants a build on a full disk to fail, and one over what a
	// failed build left to never call that the user's; a build without
	// --force that stops at it says how to go on.
	fails := func(args ...string) outcome {
		t.Helper()
		o := dbrig(t, args...)
		switch {
		case o.code == 0:
			t.Fatalf("a build on a full disk: exit 0")
		case strings.Contains(o.stderr, "yourself"):
			t.Fatalf("a build refused a failed build's own tables as the user's: %s", o.stderr)
		case o.code == 2 && !strings.HasPrefix(o.stderr, "dbrig: target "+u+": "):
			wantIn(t, "a build over a failed one", o.stderr, "--force")
		}
		return o
	}
	// Out of room while the tables are made and recorded: the few pages
	// left run out at each step in turn, until there is room for them all
	// and the build stops in its load (its progress has begun).
	for free, made := int64(0), false; !made; free += 8 << 10 {
		if free > 1<<20 {
			t.Fatal("with 1 MB free the build still did not reach its load")
		}
		t.Logf("--- %d KB free", free>>10)
		disk.leave(free)
		made = strings.Contains(fails(build...).stderr, "Building tproc-c")
		fails(build...)
		fails(append(build, "--force")...)
		disk.leave(4 << 20)
		mustRun(t, "drop", "tproc-c", "--target", u)
		if n := onTarget(t, u, tables); n != 0 {
			t.Fatalf("%d tables left after drop, with %d KB free at the build", n, free>>10)
		}
	}
	// Out of room in the load.
	disk.leave(2 << 20)
	fails(build...)
	fails(build...)
	fails(append(build, "--force")...)
	mustRun(t, "drop", "tproc-c", "--target", u)
	if n := onTarget(t, u, tables); n != 0 {
		t.Fatalf("%d tables left after drop", n)
	}
	disk.free()
	mustRun(t, build...)
}

// TestBuildFullDisk: PostgreSQL, with the database's tables in a
// tablespace on a small disk.
func TestBuildFullDisk(t *testing.T) {
	t.Parallel()
	u := pgtest.NewDB(t)
	disk := newSmallDisk(t, 256<<20)
	cfg, err := pgx.ParseConfig(u)
	if err != nil {
		t.Fatal(err)
	}
	// The server's own user must own the tablespace's directory.
	var dataDir string
	c, ctx := pgConn(t, u)
	if err := c.QueryRow(ctx, "SHOW data_directory").Scan(&dataDir); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	loc := filepath.Join(disk.dir, "ts")
	if err := os.Mkdir(loc, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(loc, int(st.Uid), int(st.Gid)); err != nil {
		t.Fatal(err)
	}
	space := pgx.Identifier{"ts_" + cfg.Database}.Sanitize()
	db := pgx.Identifier{cfg.Database}.Sanitize()
	pgExec(t, u, "CREATE TABLESPACE "+space+" LOCATION '"+strings.ReplaceAll(loc, "'", "''")+"'")
	// The database goes first, then its tablespace, before the disk is
	// unmounted.
	t.Cleanup(func() {
		ctx := context.Background()
		m, _ := pgtest.Maintenance(t, u)
		defer m.Close(ctx)
		for _, stmt := range []string{"DROP DATABASE IF EXISTS " + db + " WITH (FORCE)", "DROP TABLESPACE " + space} {
			if _, err := m.Exec(ctx, stmt); err != nil {
				t.Errorf("%s: %v", stmt, err)
			}
		}
	})
	pgExec(t, u, "ALTER DATABASE "+db+" SET default_tablespace = "+space)
	buildOnFullDisk(t, u, disk, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")
}

// TestBuildFullDiskSQLite: SQLite, with its file on a small disk.
func TestBuildFullDiskSQLite(t *testing.T) {
	t.Parallel()
	disk := newSmallDisk(t, 256<<20)
	u := "sqlite:" + filepath.Join(disk.dir, "x.db")
	buildOnFullDisk(t, u, disk, "SELECT count(*) FROM sqlite_master WHERE type = 'table'")
}

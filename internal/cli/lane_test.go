package cli_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/server"
	"github.com/dbrig/dbrig/internal/server/mariadb/mariatest"
	"github.com/dbrig/dbrig/internal/server/postgres/pgtest"
)

// TestKeyedTerminalsSQLite: a keyed run of more than the specification's
// ten terminals a warehouse is refused in one line before it starts.
func TestKeyedTerminalsSQLite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	u := sqliteTPROCC(t)
	out := filepath.Join(dir, "r.json")
	msg := usageError(t, dbrig(t, "run", "tproc-c", "--target", u, "--keying-thinking", "--vus", "11", "--duration", "1s", "--json", out))
	wantIn(t, "refusal", msg, "10 terminals a warehouse")
	wantIn(t, "refusal", msg, "--vus 10 or fewer")
	noFile(t, out)
}

// TestKillServerElsewhere: --kill-server-at kills only the managed server
// the run's target is on; a target elsewhere (an SQLite file, another
// kind's URL, another server's port) is refused in one line before
// anything runs, and the server keeps running.
func TestKillServerElsewhere(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pg := pgtest.Start(t)
	maria := mariatest.Start(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "r.json")
	sqlite := "sqlite:" + filepath.Join(dir, "x.db")
	for _, c := range []struct {
		name, url, dir, want string
	}{
		{"sqlite on mariadb", sqlite, maria.Dir, "is a sqlite database, not one on the mariadb server in " + maria.Dir},
		{"sqlite on postgres", sqlite, pg.Dir, "is a sqlite database, not one on the postgres server in " + pg.Dir},
		{"mariadb url on postgres", "mariadb://u@127.0.0.1:1/x", pg.Dir, "is a mariadb database, not one on the postgres server"},
		{"another postgres", "postgres://dbrig@127.0.0.1:1/x", pg.Dir, "is at tcp 127.0.0.1:1, not on the postgres server in " + pg.Dir + ", which listens at tcp 127.0.0.1:"},
		{"another mariadb", "mariadb://u@localhost:1/x", maria.Dir, "is at tcp 127.0.0.1:1, not on the mariadb server"},
	} {
		t.Run(c.name, func(t *testing.T) {
			msg := usageError(t, dbrig(t, "run", "cpu", "--target", c.url, "--loops", "1000",
				"--kill-server-at", "1s", "--server-dir", c.dir, "--json", out))
			wantIn(t, "refusal", msg, "--kill-server-at: the target ")
			wantIn(t, "refusal", msg, c.want)
		})
	}
	noFile(t, out)
	// What is on the server passes, by TCP under any loopback name or by
	// its socket.
	for _, m := range []struct {
		s   server.Server
		dir string
	}{{pg, pg.Dir}, {maria, maria.Dir}} {
		st, err := m.s.Status(ctx)
		if err != nil || st.State != server.Running {
			t.Fatalf("the server in %s: %v %v, want it running after the refusals", m.dir, st.State, err)
		}
		u := m.s.URLFor("x")
		for _, u := range []string{u, strings.Replace(u, "127.0.0.1", "localhost", 1), st.Socket} {
			if err := server.Serves(m.dir, st, u); err != nil {
				t.Errorf("%s is on the server in %s: %v", dbtarget.Redact(u), m.dir, err)
			}
		}
	}
}

// onTarget runs stmt on the database at u, as its user would, outside
// dbrig's commands; a query's one integer comes back.
func onTarget(t *testing.T, u, stmt string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tg, err := dbtarget.Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	s, err := tg.Session(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !strings.HasPrefix(stmt, "SELECT") {
		if _, err := s.Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
		return 0
	}
	var n int
	if err := s.QueryRow(ctx, stmt).Scan(&n); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
	return n
}

// forceKeepsUsersTable: build --force and drop remove only what dbrig's
// build record lists. A user's table that shares a name with one of the
// workload's is named and kept, with its row, and nothing is dropped; a
// build from before the record is refused with what to do.
func forceKeepsUsersTable(t *testing.T, u string) {
	build := []string{"build", "tproc-c", "--target", u, "--warehouses", "1", "--loaders", "1"}
	onTarget(t, u, "CREATE TABLE customer (id int)")
	onTarget(t, u, "INSERT INTO customer VALUES (42)")
	msg := usageError(t, dbrig(t, build...))
	wantIn(t, "build over a user's table", msg, "table customer on ")
	wantIn(t, "build over a user's table", msg, "not built by dbrig")
	for _, args := range [][]string{append(build, "--force"), {"drop", "tproc-c", "--target", u}} {
		msg := usageError(t, dbrig(t, args...))
		wantIn(t, args[0]+" over a user's table", msg, "table customer on ")
		wantIn(t, args[0]+" over a user's table", msg, "nothing was dropped")
		if n := onTarget(t, u, "SELECT count(*) FROM customer WHERE id = 42"); n != 1 {
			t.Fatalf("after %s: the user's customer table has %d of its row", args[0], n)
		}
	}
	// Out of the way, the user's table stays through builds, a rebuild
	// and a drop.
	onTarget(t, u, "ALTER TABLE customer RENAME TO my_customer")
	mustRun(t, build...)
	mustRun(t, append(build, "--force")...)
	mustRun(t, "drop", "tproc-c", "--target", u)
	if n := onTarget(t, u, "SELECT count(*) FROM my_customer WHERE id = 42"); n != 1 {
		t.Fatalf("the user's table has %d of its row after a build, a rebuild and a drop", n)
	}
	// A build from before the record: nothing of it is dropped.
	mustRun(t, build...)
	onTarget(t, u, "DROP TABLE dbrig_built")
	for _, args := range [][]string{append(build, "--force"), {"drop", "tproc-c", "--target", u}} {
		msg := usageError(t, dbrig(t, args...))
		wantIn(t, args[0]+" of an old build", msg, "from before builds recorded what they made")
		wantIn(t, args[0]+" of an old build", msg, "drop them yourself")
	}
	if n := onTarget(t, u, "SELECT count(*) FROM warehouse"); n != 1 {
		t.Errorf("the old build has %d warehouses, want its 1 kept", n)
	}
}

func TestForceKeepsUsersTable(t *testing.T) {
	t.Parallel()
	forceKeepsUsersTable(t, pgtest.NewDB(t))
}

func TestForceKeepsUsersTableSQLite(t *testing.T) {
	t.Parallel()
	forceKeepsUsersTable(t, "sqlite:"+filepath.Join(t.TempDir(), "u.db"))
}

//go:build unix

package postgres

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/server/postgres/pgtest"
	"github.com/dbrig/dbrig/internal/telemetry"
	"github.com/jackc/pgx/v5"
)

// TestOthersPostgres: the run's sessions carry the target's name, and
// the telemetry tells them from other clients' by it. The sampler marks
// another client's active session as another's, with its
// application_name; the edges' read finds, besides those active, one
// that ran a statement since the previous read and went idle before the
// sampler looked; an idle session that ran nothing is not counted, nor
// is any of the run's, whichever process of a run in parts opened it.
func TestOthersPostgres(t *testing.T) {
	url := pgtest.NewDB(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	src := openSource(t, url)
	sleep := func(c interface {
		Exec(context.Context, string, ...any) (int64, error)
	}) {
		go c.Exec(ctx, "SELECT pg_sleep(30)")
	}
	own, err := src.t.Session(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	sleep(own)
	// Another process of the same run in parts: a target of its own,
	// given the run's name, as the source's is below.
	part, err := Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer part.Close()
	dbtarget.NameSessions(part, src.t.name)
	partSession, err := part.Session(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer partSession.Close()
	sleep(partSession)

	connect := func(app string) *pgx.Conn {
		c, err := pgx.Connect(ctx, url+"&application_name="+app)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close(context.Background()) })
		return c
	}
	go connect("pgbench").Exec(ctx, "SELECT pg_sleep(30)")
	psql := connect("psql")

	var seen []telemetry.Session
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if seen, err = src.Sessions(ctx); err != nil {
			t.Fatal(err)
		}
		clients := slices.DeleteFunc(slices.Clone(seen), func(s telemetry.Session) bool { return s.Backend != clientBackend })
		if len(clients) == 3 || time.Now().After(deadline) {
			seen = clients
			break
		}
	}
	var others []string
	for _, s := range seen {
		if s.Other {
			others = append(others, s.Client)
		} else if s.Client != src.t.name {
			t.Errorf("a session named %q counted as the run's (named %q)", s.Client, src.t.name)
		}
	}
	if len(seen) != 3 || !slices.Equal(others, []string{"pgbench"}) {
		t.Errorf("the sampler saw %+v; want the run's two sessions and pgbench's, pgbench's alone another client's", seen)
	}

	names := func(ss []telemetry.Session) []string {
		var out []string
		for _, s := range ss {
			if !s.Other || s.ID == "" {
				t.Errorf("Others gave %+v, not another client's with an id", s)
			}
			out = append(out, s.Client)
		}
		slices.Sort(out)
		return out
	}
	first, err := src.Others(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(first); !slices.Equal(got, []string{"pgbench"}) {
		t.Errorf("Others at the first edge: %q, want the active pgbench alone (psql is idle)", got)
	}
	if _, err := psql.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	second, err := src.Others(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(second); !slices.Equal(got, []string{"pgbench", "psql"}) {
		t.Errorf("Others at the second edge: %q, want pgbench and psql, which ran a statement since the first", got)
	}
	if first[0].ID != second[0].ID {
		t.Errorf("pgbench's session has id %q, then %q", first[0].ID, second[0].ID)
	}
}

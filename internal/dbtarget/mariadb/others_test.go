package mariadb_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/server/mariadb/mariatest"
	"github.com/dbrig/dbrig/internal/telemetry"
)

// TestOthersMariaDB: the telemetry tells the run's sessions from other
// clients'. Without performance_schema (the shared test server's
// default) by the ids of the connections the run's target opened, naming
// the others by user and host; a run in parts then cannot tell its other
// parts' sessions, and says so. With it, by the program_name the target
// gives its connections, which a run in parts shares.
func TestOthersMariaDB(t *testing.T) {
	t.Run("process list", func(t *testing.T) {
		url := mariatest.NewDB(t)
		checkOthers(t, openURL(t, url), openURL(t, url), func(name string) bool { return strings.Contains(name, "@") })

		tg := openURL(t, url)
		dbtarget.NameSessions(tg, dbtarget.RunName("nightly"))
		src := telemetrySource(t, tg)
		if _, err := src.Others(context.Background()); err == nil || !strings.Contains(err.Error(), "performance_schema") {
			t.Errorf("a run in parts without performance_schema: Others gave %v, want an error naming performance_schema", err)
		}
	})
	t.Run("performance_schema", func(t *testing.T) {
		url := withPerformanceSchema(t, "others")
		tg, part := openURL(t, url), openURL(t, url)
		for _, p := range []dbtarget.Target{tg, part} {
			dbtarget.NameSessions(p, dbtarget.RunName("nightly"))
		}
		// The other part's sessions are the run's; another dbrig's, named
		// by its own program_name, are not.
		checkOthers(t, tg, openURL(t, url), func(name string) bool { return strings.HasPrefix(name, "dbrig ") }, part)
	})
}

// checkOthers has a session of tg's, one of each of its run's other
// targets (mine) and one of other's at work, and one of other's idle:
// the sampler marks other's at work alone as another client's, under a
// name named says is right; the first edge's read finds it, the second
// also the idle one, which ran a statement in between.
func checkOthers(t *testing.T, tg, other dbtarget.Target, named func(string) bool, mine ...dbtarget.Target) {
	t.Helper()
	ctx := context.Background()
	src := telemetrySource(t, tg)
	killer := session(t, tg)
	var ids []int64
	for _, owner := range append([]dbtarget.Target{tg, other}, mine...) {
		s := session(t, owner)
		var id int64
		if err := s.QueryRow(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
		go s.Exec(ctx, "DO SLEEP(30)")
	}
	defer func() {
		for _, id := range ids {
			exec(t, killer, fmt.Sprintf("KILL QUERY %d", id))
		}
	}()
	idle := session(t, other)

	var seen []telemetry.Session
	var err error
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if seen, err = src.Sessions(ctx); err != nil {
			t.Fatal(err)
		}
		if len(seen) == len(ids) || time.Now().After(deadline) {
			break
		}
	}
	others := slices.DeleteFunc(slices.Clone(seen), func(s telemetry.Session) bool { return !s.Other })
	if len(seen) != len(ids) || len(others) != 1 || others[0].ID != fmt.Sprint(ids[1]) || !named(others[0].Client) {
		t.Errorf("the sampler saw %+v; want %d sessions at work, the other client's alone (id %d) another's, with its name", seen, len(ids), ids[1])
	}
	read := func(edge string, want int) []telemetry.Session {
		ss, err := src.Others(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(ss) != want {
			t.Errorf("Others at the %s edge: %+v, want %d of the other client's (ids %v)", edge, ss, want, ids)
		}
		for _, s := range ss {
			if !s.Other || !named(s.Client) {
				t.Errorf("Others at the %s edge gave %+v, not another client's, named", edge, s)
			}
		}
		return ss
	}
	read("first", 1)
	exec(t, idle, "SELECT 1")
	read("second", 2)
}

func openURL(t *testing.T, url string) dbtarget.Target {
	t.Helper()
	tg, err := dbtarget.OpenExisting(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	return tg
}

func telemetrySource(t *testing.T, tg dbtarget.Target) telemetry.Source {
	t.Helper()
	src, err := tg.(telemetry.Sourcer).Telemetry(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return src
}

package parts

import (
	"context"
	"errors"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/workload"
)

// Drop drops the barrier's tables from t's database, for `dbrig drop`.
// A split run leaves them when it ends, on purpose: its row is the
// barrier's memory of the run, which turns away a part that comes late
// (rather than let it lead a run of its own), and the tables are shared by
// every --part-run on the database, so no part can tell that it is the
// last of all of them to leave. A run still gathering, or whose window
// has not closed, keeps them: Drop drops nothing and names it (live). A
// dialect that keeps no barrier (SQLite) has none to drop.
func Drop(ctx context.Context, t dbtarget.Target) (live string, err error) {
	q, err := load(t.Dialect())
	var ue *exitcode.UserError
	switch {
	case errors.As(err, &ue):
		return "", nil
	case err != nil:
		return "", err
	}
	s, err := t.Session(ctx)
	if err != nil {
		return "", err
	}
	defer s.Close()
	var n int
	if err := s.QueryRow(ctx, q.Get("exists")).Scan(&n); err != nil || n == 0 {
		return "", err
	}
	names, err := workload.ReadNames(ctx, s, q.Get("runs"))
	if err != nil {
		return "", err
	}
	now, err := serverNow(ctx, s, q)
	if err != nil {
		return "", err
	}
	for _, name := range names {
		r, err := scanRun(s.QueryRow(ctx, q.Get("read_run"), name))
		if err != nil {
			return "", err
		}
		if r.underWay(now) {
			return name, nil
		}
	}
	_, err = s.Exec(ctx, q.Get("drop"))
	return "", err
}

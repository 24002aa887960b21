package parts

import (
	"context"

	"github.com/dbrig/dbrig/internal/dbtarget"
)

// run is a row of dbrig_part_runs: instants in server µs.
type run struct {
	id                                     string
	parts                                  int
	state                                  string
	leader                                 int
	seed                                   int64
	config, sha                            string
	created, deadline, start, open, closes int64
	hold                                   int64
	reason                                 string
}

func scanRun(row dbtarget.Row) (r run, err error) {
	err = row.Scan(&r.id, &r.parts, &r.state, &r.leader, &r.seed, &r.config, &r.sha, &r.created, &r.deadline,
		&r.start, &r.open, &r.closes, &r.hold, &r.reason)
	return r, err
}

// stale says a new leader may take the row for a new run at now: it is
// new (idle), failed, gathering past its deadline, or started and its
// window closed, held and given its grace.
func (r run) stale(now int64) bool {
	switch r.state {
	case gathering:
		return now > r.deadline
	case started:
		return now > r.closes+r.hold+grace.Microseconds()
	}
	return true
}

// underWay says the run is gathering before its deadline, or started and
// its window not yet closed, at now: a part that comes to it then is
// turned away, which takes its row. Past its window a run's parts no
// longer read the barrier's tables.
func (r run) underWay(now int64) bool {
	switch r.state {
	case gathering:
		return now <= r.deadline
	case started:
		return now <= r.closes
	}
	return false
}

// member is a row of dbrig_part_members.
type member struct {
	part                       int
	host                       string
	pid                        int
	joined, ready, offset, rtt int64
}

// members reads the members of run id, by part.
func (m *Member) members(ctx context.Context, id string) ([]member, error) {
	rows, err := m.s.Query(ctx, m.q.Get("members"), id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []member
	for rows.Next() {
		var o member
		if err := rows.Scan(&o.part, &o.host, &o.pid, &o.joined, &o.ready, &o.offset, &o.rtt); err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, rows.Err()
}

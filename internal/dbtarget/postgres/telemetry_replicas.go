package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/dbrig/dbrig/internal/telemetry"
	"github.com/jackc/pgx/v5"
)

var _ telemetry.ReplicaSource = (*source)(nil)

// replicasSQL reads pg_stat_replication with the server's own position:
// its current WAL position on a primary, what it has received on a
// standby that cascades to others. Positions are bytes from 0/0, lags
// milliseconds. A standby named in synchronous_standby_names by priority
// ("sync") or in a quorum ("quorum") holds commits; "potential" ones wait
// to take its place.
const replicasSQL = `SELECT coalesce(application_name, ''), pid, coalesce(state, ''), coalesce(sync_state, ''),
	coalesce(sync_state IN ('sync', 'quorum'), false),
	coalesce((CASE WHEN pg_is_in_recovery() THEN pg_last_wal_receive_lsn() ELSE pg_current_wal_lsn() END - '0/0')::numeric, 0),
	coalesce((sent_lsn - '0/0')::numeric, 0), coalesce((write_lsn - '0/0')::numeric, 0),
	coalesce((flush_lsn - '0/0')::numeric, 0), coalesce((replay_lsn - '0/0')::numeric, 0),
	extract(epoch FROM write_lag)::float8 * 1000, extract(epoch FROM flush_lag)::float8 * 1000,
	extract(epoch FROM replay_lag)::float8 * 1000
FROM pg_stat_replication
ORDER BY application_name, pid`

// Replicas reads where each standby streaming from the server is, on the
// stats connection, which follows the primary through a multi-host URL
// (target_session_attrs=read-write) after a failover. A standby is named
// by its application_name (a managed cluster's node name, Patroni's
// member name); two of one name (libpq's default, "walreceiver") are told
// apart by their WAL sender's pid.
func (s *source) Replicas(ctx context.Context) ([]telemetry.Replica, error) {
	var out []telemetry.Replica
	var pids []int32
	err := s.stats.do(ctx, func(ctx context.Context, c *pgx.Conn) error {
		out, pids = out[:0], pids[:0]
		rows, err := c.Query(ctx, replicasSQL)
		if err != nil {
			return err
		}
		var r telemetry.Replica
		var pid int32
		_, err = pgx.ForEachRow(rows, []any{&r.Name, &pid, &r.State, &r.SyncState, &r.Synchronous,
			&r.Primary, &r.Sent, &r.Written, &r.Flushed, &r.Replayed, &r.WriteLag, &r.FlushLag, &r.ReplayLag}, func() error {
			out, pids = append(out, r), append(pids, pid)
			// The lags' next scan must not write into this row's.
			r = telemetry.Replica{}
			return nil
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("reading the replicas: %w", err)
	}
	names := map[string]int{}
	for _, r := range out {
		names[r.Name]++
	}
	for i := range out {
		if out[i].Name == "" || names[out[i].Name] > 1 {
			out[i].Name = strings.TrimSpace(out[i].Name + " (pid " + strconv.Itoa(int(pids[i])) + ")")
		}
	}
	return out, nil
}

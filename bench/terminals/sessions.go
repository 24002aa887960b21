//go:build unix

package main

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// sessionPoll watches the client sessions the server has on a database
// while a point runs, from a connection of its own to another database
// (the maintenance database postgres): its queries, a transaction a
// second, would otherwise count in the measured database's TPM.
type sessionPoll struct {
	conn   *pgx.Conn
	db     string
	before int64
	stop   chan struct{}
	done   chan int
}

// pollSessions reads database db's count of sessions opened so far, then
// counts its client backends once a second until end, over a connection
// to adminURL.
func pollSessions(ctx context.Context, adminURL, db string) (*sessionPoll, error) {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return nil, err
	}
	p := &sessionPoll{conn: conn, db: db, stop: make(chan struct{}), done: make(chan int, 1)}
	if p.before, err = p.opened(ctx); err != nil {
		conn.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	go p.loop(ctx)
	return p, nil
}

// loop polls until stopped and hands over the most sessions seen. Its
// queries run to their end: pgx closes a connection whose query is
// cancelled.
func (p *sessionPoll) loop(ctx context.Context) {
	most := 0
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		most = max(most, p.count(ctx))
		select {
		case <-p.stop:
			p.done <- most
			return
		case <-t.C:
		}
	}
}

// count is the database's client backends, 0 when they cannot be read.
func (p *sessionPoll) count(ctx context.Context) int {
	var n int
	err := p.conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
		WHERE datname = $1 AND backend_type = 'client backend'`, p.db).Scan(&n)
	if err != nil {
		return 0
	}
	return n
}

// end stops the poll and returns the most client sessions seen at once
// and the sessions the database counted opening meanwhile.
func (p *sessionPoll) end(ctx context.Context) (most int, opened int64, err error) {
	close(p.stop)
	most = <-p.done
	defer p.conn.Close(context.WithoutCancel(ctx))
	// The client's backends publish their count as they exit, which
	// they do soon after it has gone.
	for wait := 0; wait < 50 && p.count(ctx) > 0; wait++ {
		time.Sleep(100 * time.Millisecond)
	}
	after, err := p.opened(ctx)
	return most, after - p.before, err
}

// opened is pg_stat_database.sessions of the database: sessions opened
// since the statistics were reset. A backend publishes its statistics
// within a second or so, which the poll's own pace covers.
func (p *sessionPoll) opened(ctx context.Context) (int64, error) {
	if _, err := p.conn.Exec(ctx, "SELECT pg_stat_clear_snapshot()"); err != nil {
		return 0, err
	}
	var n int64
	err := p.conn.QueryRow(ctx, "SELECT sessions FROM pg_stat_database WHERE datname = $1", p.db).Scan(&n)
	return n, err
}

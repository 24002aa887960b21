//go:build unix

package main

import (
	"context"
	"testing"

	"github.com/dbrig/dbrig/internal/server/postgres/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestRestorePostgres: on a real server, a database kept after its build
// comes back as it was built, its rows changed since undone, with its
// owner; the counters a run's figures come from move with what the run
// writes: WAL, blocks dirtied, orders.
func TestRestorePostgres(t *testing.T) {
	ctx := context.Background()
	// A server of its own, started with the defaults of a managed one,
	// pg_stat_statements preloaded among them.
	srv := pgtest.NewServer(t)
	if err := srv.Start(ctx, nil); err != nil {
		t.Fatal(err)
	}
	s := &side{tool: "test", urlFor: srv.URLFor, db: "tpcc"}
	if err := s.admin(ctx, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements", "CREATE ROLE tpcc LOGIN", "CREATE DATABASE tpcc OWNER tpcc"); err != nil {
		t.Fatal(err)
	}
	if err := s.in(ctx, s.db, "CREATE TABLE district (d_id int, d_next_o_id int, d_pad char(500))",
		"INSERT INTO district SELECT d, 3001, 'x' FROM generate_series(1, 10) d"); err != nil {
		t.Fatal(err)
	}
	if err := s.keep(ctx); err != nil {
		t.Fatal(err)
	}
	if s.kept.Owner != "tpcc" || s.kept.Template != "tpcc_built" {
		t.Fatalf("kept %+v: want tpcc_built, owned by tpcc", s.kept)
	}
	before, err := s.read(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	if before.nextOrder != 30010 {
		t.Fatalf("before: %+v, want sum(d_next_o_id) 30010", before)
	}
	if err := s.in(ctx, s.db, "UPDATE district SET d_next_o_id = d_next_o_id + 1, d_pad = 'y'"); err != nil {
		t.Fatal(err)
	}
	after, err := s.read(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if after.nextOrder-before.nextOrder != 10 || after.wal <= before.wal || after.dirtied < 1 {
		t.Errorf("after an update of the 10 rows: %+v from %+v, want 10 more orders, WAL written and blocks dirtied", after, before)
	}
	if err := s.kept.Restore(ctx, s.tool); err != nil {
		t.Fatal(err)
	}
	back, err := s.read(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	var owner string
	if err := s.query(ctx, "postgres", "SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = $1", []any{s.db}, &owner); err != nil {
		t.Fatal(err)
	}
	if back.nextOrder != 30010 || owner != "tpcc" {
		t.Errorf("restored: sum(d_next_o_id) %d, owned by %q: want 30010 as built, owned by tpcc", back.nextOrder, owner)
	}
}

package tprocc

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/server/postgres/pgtest"
	"github.com/dbrig/dbrig/internal/workload"
)

// TestBuildInterrupted: a build cancelled while its loaders are at work
// (Ctrl-C) stops them and drops the tables it made.
func TestBuildInterrupted(t *testing.T) {
	ctx := context.Background()
	tg, err := dbtarget.Open(ctx, pgtest.NewDB(t))
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	bctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var loading atomic.Bool
	w := &tprocc{warehouses: 1, loaders: 2, seed: defaultSeed}
	_, err = w.Build(bctx, tg, workload.BuildOptions{Progress: func(_, _ int64, what string) {
		if what == "loading" && !loading.Swap(true) {
			time.AfterFunc(300*time.Millisecond, cancel)
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("build: %v, want context.Canceled", err)
	}
	s, err := tg.Session(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var tables int
	if err := s.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").Scan(&tables); err != nil {
		t.Fatal(err)
	}
	if tables != 0 {
		t.Errorf("%d tables left after the interrupted build, want none", tables)
	}
}

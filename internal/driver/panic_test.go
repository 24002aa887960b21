package driver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/exitcode"
)

// panicky is a workload whose third transaction panics, on a VU or on a
// pooled session, as a bug in a workload's code would.
type panicky struct{ n atomic.Int64 }

func (w *panicky) TxNames() []string                      { return []string{"a"} }
func (w *panicky) TallyNames() []string                   { return nil }
func (w *panicky) NewVU(context.Context, int) (VU, error) { return &panickyVU{w}, nil }
func (w *panicky) NewTerminal(int) Terminal               { return panickyTerm{} }
func (w *panicky) NewSession(context.Context, int) (Session, error) {
	return &panickySession{w}, nil
}

func (w *panicky) transaction() {
	time.Sleep(time.Millisecond)
	if w.n.Add(1) == 3 {
		var row []int
		_ = row[len(w.TxNames())+6]
	}
}

type panickyVU struct{ w *panicky }

func (v *panickyVU) Next() int                             { return 0 }
func (v *panickyVU) Run(context.Context, int, Tally) error { v.w.transaction(); return nil }
func (v *panickyVU) Reconnect(context.Context) error       { return nil }
func (v *panickyVU) Close() error                          { return nil }

type panickyTerm struct{}

func (panickyTerm) Next() int                                { return 0 }
func (panickyTerm) Pacing(int) (before, after time.Duration) { return 0, 0 }

type panickySession struct{ w *panicky }

func (s *panickySession) Run(context.Context, Terminal, int, Tally) error {
	s.w.transaction()
	return nil
}
func (s *panickySession) Reconnect(context.Context) error { return nil }
func (s *panickySession) Close() error                    { return nil }

// TestPanicEndsTheRun: a panic in a VU's goroutine, or in a pooled
// session's, does not crash the process: it ends the run, which returns it
// as an *exitcode.Panic with its stack, for the command to report as it
// does a panic of its own.
func TestPanicEndsTheRun(t *testing.T) {
	for name, cfg := range map[string]Config{
		"VUs":      {VUs: 4, Duration: time.Minute},
		"sessions": {VUs: 4, Connections: 2, Duration: time.Minute},
	} {
		t.Run(name, func(t *testing.T) {
			began := time.Now()
			res, err := Run(context.Background(), &panicky{}, cfg)
			var p *exitcode.Panic
			if !errors.As(err, &p) || res != nil {
				t.Fatalf("Run: %v, %v; want no result and the panic", res, err)
			}
			if !strings.Contains(fmt.Sprint(p.Value), "index out of range [7] with length 0") || !strings.Contains(string(p.Stack), "panic_test.go") {
				t.Errorf("the panic %q, its stack:\n%s\nwant the index's, from where it happened", p.Value, p.Stack)
			}
			if took := time.Since(began); took > 30*time.Second {
				t.Errorf("the run went on for %s, its window a minute; want it ended by the panic", took)
			}
		})
	}
}

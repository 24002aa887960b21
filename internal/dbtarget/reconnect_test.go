package dbtarget

import (
	"context"
	"errors"
	"testing"
	"time"
)

var (
	errLost  = errors.New("connection lost")
	errOther = errors.New("syntax error")
)

func classifyTest(err error) ErrClass {
	if errors.Is(err, errLost) {
		return ErrConnLost
	}
	return ErrOther
}

func TestReconnecting(t *testing.T) {
	for _, c := range []struct {
		name string
		// ops and reopens are what successive calls return.
		ops, reopens []error
		want         error
		wantOps      int
	}{
		{"works at once", []error{nil}, nil, nil, 1},
		{"other error is not retried", []error{errOther}, nil, errOther, 1},
		{"reopened at once", []error{errLost, nil}, []error{nil}, nil, 2},
		{"reopen fails, then works", []error{errLost, nil}, []error{errLost, errLost, nil}, nil, 2},
		{"lost again after reopening is not retried", []error{errLost, errLost}, []error{nil}, errLost, 2},
		{"other error after reopening", []error{errLost, errOther}, []error{nil}, errOther, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			ops, reopens := 0, 0
			err := Reconnecting(context.Background(), classifyTest,
				func(context.Context) error { reopens++; return c.reopens[reopens-1] },
				func(context.Context) error { ops++; return c.ops[ops-1] })
			if !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
				t.Errorf("err = %v, want %v", err, c.want)
			}
			if ops != c.wantOps || reopens != len(c.reopens) {
				t.Errorf("%d ops and %d reopens, want %d and %d", ops, reopens, c.wantOps, len(c.reopens))
			}
		})
	}
}

// A connection that never comes back ends the wait when the caller's
// context does, with the last error.
func TestReconnectingGivesUp(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := Reconnecting(ctx, classifyTest,
		func(context.Context) error { return errLost },
		func(context.Context) error { return errLost })
	if !errors.Is(err, errLost) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want the lost connection and the deadline", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("gave up after %s, want about 500ms", d)
	}
}

package dbtarget

import (
	"context"
	"errors"
	"fmt"
)

// Query is one statement of a batch (see RunBatch). With Each, every row
// it returns is handed to Each; with Dest, its one row is scanned into
// Dest, and no row is an error wrapping ErrNoRow unless Optional, where
// Found says whether there was one; with neither, it runs for its effect.
type Query struct {
	SQL      string
	Args     []any
	Dest     []any
	Optional bool
	Each     func(Row) error
	// Found is set by RunBatch for a query with Dest.
	Found bool
}

// ErrNoRow is what a batch's query with Dest returns when it found no
// row and was not Optional.
var ErrNoRow = errors.New("the statement returned no row")

// Batcher is a Session that sends a batch's statements together, in one
// round trip, and reads their results in order.
type Batcher interface {
	Batch(ctx context.Context, qs []Query) error
}

// RunBatch runs qs in order on s, stopping at the first error. The
// statements must not depend on each other's results: a Batcher sends
// them all before it reads any result. Other sessions run them one by one.
func RunBatch(ctx context.Context, s Session, qs []Query) error {
	if b, ok := s.(Batcher); ok {
		return b.Batch(ctx, qs)
	}
	for i := range qs {
		q := &qs[i]
		if q.Dest == nil && q.Each == nil {
			if _, err := s.Exec(ctx, q.SQL, q.Args...); err != nil {
				return err
			}
			continue
		}
		rows, err := s.Query(ctx, q.SQL, q.Args...)
		if err != nil {
			return err
		}
		if err := q.Read(rows); err != nil {
			return err
		}
	}
	return nil
}

// Read reads q's result from rows and closes them, as RunBatch does.
func (q *Query) Read(rows Rows) error {
	defer rows.Close()
	q.Found = false
	for rows.Next() {
		var err error
		switch {
		case q.Each != nil:
			err = q.Each(rows)
		case !q.Found:
			q.Found = true
			err = rows.Scan(q.Dest...)
		}
		if err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if q.Dest != nil && q.Each == nil && !q.Found && !q.Optional {
		return fmt.Errorf("%w: %.60s", ErrNoRow, q.SQL)
	}
	return nil
}

package postgres

import (
	"context"
	"fmt"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Batch sends qs as one pipeline, ended by a single Sync: one round trip
// for all of them. Every statement, with arguments or not, goes by the
// name it was prepared under where the session names them, since a
// pipeline cannot use the simple protocol; else pgx sends each in the
// URL's mode. After an error the server skips the rest up to the Sync.
//
// Named statements go as a call's do (see call): their arguments encoded
// by the session, sent with pgconn, and their rows read from pgconn's
// buffers. pgx's Batch would build a result set and scan plans for each
// statement of every batch, which sql mode sends three or four of per
// transaction.
func (s *session) Batch(ctx context.Context, qs []dbtarget.Query) error {
	pctx, err := s.w.context(ctx)
	if err != nil {
		return err
	}
	if !s.t.named {
		return s.pgxBatch(pctx, qs)
	}
	b := &pgconn.Batch{}
	for _, q := range qs {
		st, err := s.prepare(ctx, q.SQL)
		if err != nil {
			return s.t.pooled(err)
		}
		values, formats, err := s.call.args(st, q.Args)
		if err != nil {
			return err
		}
		b.ExecStatement(st.sd, values, formats, st.results)
	}
	mrr := s.c.PgConn().ExecBatch(pctx, b)
	for i := range qs {
		if !mrr.NextResult() {
			err := mrr.Close()
			if err == nil {
				err = fmt.Errorf("batch: no result for statement %d of %d", i+1, len(qs))
			}
			return s.t.pooled(s.w.why(err))
		}
		s.brows = batchRows{rr: mrr.ResultReader(), c: &s.call}
		if err := qs[i].Read(&s.brows); err != nil {
			mrr.Close()
			return s.t.pooled(s.w.why(err))
		}
	}
	return s.t.pooled(s.w.why(mrr.Close()))
}

// pgxBatch is Batch through pgx's Batch, for a session that names no
// statements.
func (s *session) pgxBatch(pctx context.Context, qs []dbtarget.Query) error {
	b := &pgx.Batch{}
	for _, q := range qs {
		b.Queue(q.SQL, q.Args...)
	}
	br := s.c.SendBatch(pctx, b)
	for i := range qs {
		rows, err := br.Query()
		if err == nil {
			err = qs[i].Read(rows)
		}
		if err != nil {
			br.Close()
			return s.t.pooled(s.w.why(err))
		}
	}
	return s.t.pooled(s.w.why(br.Close()))
}

// batchRows is one statement's result in a batch, read as a call reads
// its row.
type batchRows struct {
	rr   *pgconn.ResultReader
	c    *call
	err  error
	done bool
}

func (r *batchRows) Next() bool {
	if r.done {
		return false
	}
	if r.rr.NextRow() {
		return true
	}
	r.Close()
	return false
}

func (r *batchRows) Scan(dest ...any) error {
	if err := r.c.decode(r.rr.FieldDescriptions(), r.rr.Values(), dest); err != nil {
		// As pgx's rows: a row that cannot be read ends the result.
		r.err = err
		r.Close()
		return err
	}
	return nil
}

func (r *batchRows) Err() error { return r.err }

func (r *batchRows) Close() {
	if r.done {
		return
	}
	r.done = true
	if _, err := r.rr.Close(); r.err == nil {
		r.err = err
	}
}

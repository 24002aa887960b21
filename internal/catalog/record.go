package catalog

import (
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Meta is what a user says of a document as it is catalogued: its tags
// and the commit of their own application it measured.
type Meta struct {
	Tags   []string
	Commit string
}

// Add catalogues the document b, read from (or written to) path, and
// returns its entry and whether it is new: a document already there is
// left as it was, its tags and all.
func (c *Catalog) Add(ctx context.Context, path string, b []byte, m Meta) (*Entry, bool, error) {
	e, err := Index(path, b)
	if err != nil {
		return nil, false, err
	}
	e.Commit = m.Commit
	e.Tags = cleanTags(m.Tags)
	e.RecordedAt = time.Now().UTC()
	added, err := c.insert(ctx, e, b)
	if err != nil {
		return nil, false, err
	}
	if !added {
		got, err := c.Get(ctx, e.ID)
		return got, false, err
	}
	return e, true, nil
}

// insert writes e and its document in one transaction.
func (c *Catalog) insert(ctx context.Context, e *Entry, b []byte) (bool, error) {
	gz, err := compress(b)
	if err != nil {
		return false, err
	}
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return false, c.fail("cannot write to it", err)
	}
	defer tx.Rollback()
	// The config and metrics go in twice: as rows, which conditions
	// find by an index, and as JSON in the entry, which a list reads
	// with the entry in one row.
	cfg, err := json.Marshal(e.Config)
	if err != nil {
		return false, err
	}
	mets, err := json.Marshal(e.Metrics)
	if err != nil {
		return false, err
	}
	res, err := tx.ExecContext(ctx, c.q(`INSERT INTO entries (id, kind, tool, workload, target_kind, target_version, target_url, host, name,
		started_at, seconds, primary_metric, verdict, commit_ref, path, size, schema_version, recorded_at, config_json, metrics_json)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20) ON CONFLICT (id) DO NOTHING`),
		e.ID, e.Kind, e.Tool, e.Workload, e.TargetKind, e.TargetVersion, e.TargetURL, e.Host, e.Name,
		e.StartedAt.UnixMicro(), e.Seconds, e.Primary, e.Verdict, e.Commit, e.Path, e.Size, e.Schema, e.RecordedAt.UnixMicro(), string(cfg), string(mets))
	if err != nil {
		return false, c.fail("cannot write to it", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return false, nil
	}
	var rows [][]any
	for k, v := range e.Config {
		var num any
		if f, err := strconv.ParseFloat(v, 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
			num = f
		}
		rows = append(rows, []any{e.ID, k, v, num})
	}
	if err := c.insertRows(ctx, tx, "config (entry, key, value, num)", rows); err != nil {
		return false, err
	}
	rows = rows[:0]
	for _, m := range e.Metrics {
		rows = append(rows, []any{e.ID, m.Key, m.Label, m.Unit, boolInt(m.Higher), m.Value, nullable(m.Low), nullable(m.High), nullable(m.DB), nullable(m.Client)})
	}
	if err := c.insertRows(ctx, tx, "metrics (entry, key, label, unit, higher, value, low, high, db, client)", rows); err != nil {
		return false, err
	}
	if err := c.addTags(ctx, tx, e.ID, e.Tags); err != nil {
		return false, err
	}
	if _, err := tx.ExecContext(ctx, c.q(`INSERT INTO bodies (entry, gz) VALUES ($1, $2)`), e.ID, gz); err != nil {
		return false, c.fail("cannot write to it", err)
	}
	if err := tx.Commit(); err != nil {
		return false, c.fail("cannot write to it", err)
	}
	return true, nil
}

// insertRows inserts rows into table (with its columns) in statements
// of many rows each: a statement per row cost an ingest more than its
// document's decoding.
func (c *Catalog) insertRows(ctx context.Context, tx *sql.Tx, table string, rows [][]any) error {
	const perStatement = 100
	for len(rows) > 0 {
		n := min(len(rows), perStatement)
		var q strings.Builder
		q.WriteString("INSERT INTO " + table + " VALUES ")
		var args []any
		for i, r := range rows[:n] {
			if i > 0 {
				q.WriteString(", ")
			}
			q.WriteString("(")
			for j, v := range r {
				if j > 0 {
					q.WriteString(", ")
				}
				args = append(args, v)
				q.WriteString("$" + strconv.Itoa(len(args)))
			}
			q.WriteString(")")
		}
		if _, err := tx.ExecContext(ctx, c.q(q.String()), args...); err != nil {
			return c.fail("cannot write to it", err)
		}
		rows = rows[n:]
	}
	return nil
}

func (c *Catalog) addTags(ctx context.Context, tx *sql.Tx, id string, tags []string) error {
	for _, t := range tags {
		if _, err := tx.ExecContext(ctx, c.q(`INSERT INTO tags (entry, tag) VALUES ($1, $2) ON CONFLICT (entry, tag) DO NOTHING`), id, t); err != nil {
			return c.fail("cannot write to it", err)
		}
	}
	return nil
}

// Document is the catalogued document's bytes, exactly as they came.
func (c *Catalog) Document(ctx context.Context, id string) ([]byte, error) {
	full, err := c.resolve(ctx, id)
	if err != nil {
		return nil, err
	}
	var gz []byte
	if err := c.db.QueryRowContext(ctx, c.q(`SELECT gz FROM bodies WHERE entry = $1`), full).Scan(&gz); err != nil {
		return nil, c.fail("cannot read the document", err)
	}
	r, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, c.fail("cannot read the document", err)
	}
	return io.ReadAll(r)
}

// Tag adds tags to the entry id (or a prefix of it that only it has).
func (c *Catalog) Tag(ctx context.Context, id string, tags []string) (string, error) {
	full, err := c.resolve(ctx, id)
	if err != nil {
		return "", err
	}
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return "", c.fail("cannot write to it", err)
	}
	defer tx.Rollback()
	if err := c.addTags(ctx, tx, full, cleanTags(tags)); err != nil {
		return "", err
	}
	return full, tx.Commit()
}

// Remove takes the entry id out of the catalogue, its copy of the
// document with it; the document's own file, if any, stays.
func (c *Catalog) Remove(ctx context.Context, id string) (string, error) {
	full, err := c.resolve(ctx, id)
	if err != nil {
		return "", err
	}
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return "", c.fail("cannot write to it", err)
	}
	defer tx.Rollback()
	for _, t := range []string{"config", "metrics", "tags", "bodies"} {
		if _, err := tx.ExecContext(ctx, c.q(`DELETE FROM `+t+` WHERE entry = $1`), full); err != nil {
			return "", c.fail("cannot remove it", err)
		}
	}
	if _, err := tx.ExecContext(ctx, c.q(`DELETE FROM entries WHERE id = $1`), full); err != nil {
		return "", c.fail("cannot remove it", err)
	}
	return full, tx.Commit()
}

func compress(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	w, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if _, err := w.Write(b); err != nil {
		return nil, err
	}
	err := w.Close()
	return buf.Bytes(), err
}

// cleanTags are tags without blanks and repeats, in order.
func cleanTags(tags []string) []string {
	var out []string
	for _, t := range tags {
		if t = strings.TrimSpace(t); t != "" && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func nullable(f *float64) any {
	if f == nil {
		return nil
	}
	return *f
}

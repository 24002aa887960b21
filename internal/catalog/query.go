package catalog

import (
	"context"
	"database/sql"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dbrig/dbrig/internal/exitcode"
)

// Filter picks entries; its zero value picks every one.
type Filter struct {
	Workload string
	// Target is a target kind, optionally with the start of its version
	// after a space or a colon ("postgres", "postgres:15").
	Target string
	Host   string
	Kind   string
	Tool   string
	Tags   []string
	Where  []Cond
	Since  time.Time
	Until  time.Time
	// Limit keeps the newest Limit entries; 0 keeps all.
	Limit int
}

// Cond is one --where: a field, an operator and a value.
type Cond struct {
	Key, Op, Value string
}

// The fields of an entry a condition may name, besides config.KEY and
// metric.KEY, with their columns.
var columns = map[string]string{
	"workload": "workload", "kind": "kind", "tool": "tool", "host": "host", "name": "name",
	"commit": "commit_ref", "target.kind": "target_kind", "target.version": "target_version",
	"verdict": "verdict", "id": "id",
}

var ops = []string{"!=", ">=", "<=", "=", ">", "<", "~"}

// ParseCond reads KEY OP VALUE, OP one of = != < <= > >= and ~ (the value
// is a part of the field's text).
func ParseCond(s string) (Cond, error) {
	for i := 0; i < len(s); i++ {
		for _, op := range ops {
			if strings.HasPrefix(s[i:], op) {
				c := Cond{Key: strings.TrimSpace(s[:i]), Op: op, Value: strings.TrimSpace(s[i+len(op):])}
				return c, c.check()
			}
		}
	}
	return Cond{}, exitcode.Userf("--where %q: want KEY=VALUE (or != < <= > >= ~), such as config.vus=8 or metric.nopm>50000", s)
}

func (c Cond) check() error {
	_, col := columns[c.Key]
	cfg := strings.HasPrefix(c.Key, "config.") && len(c.Key) > len("config.")
	met := strings.HasPrefix(c.Key, "metric.") && len(c.Key) > len("metric.")
	switch {
	case c.Key == "tag" && (c.Op == "=" || c.Op == "!="):
	case !col && !cfg && !met && c.Key != "tag":
		return exitcode.Userf("--where %s: no field %q; name config.KEY, metric.KEY, tag or one of %s", c, c.Key, strings.Join(fieldNames(), ", "))
	case met && c.Op == "~":
		return exitcode.Userf("--where %s: a metric compares as a number, with = != < <= > >=", c)
	case c.Key == "tag":
		return exitcode.Userf("--where %s: a tag is there or not: tag=NAME or tag!=NAME", c)
	}
	if met || c.Op == "<" || c.Op == ">" || c.Op == "<=" || c.Op == ">=" {
		if _, err := strconv.ParseFloat(c.Value, 64); err != nil && (met || !col) {
			return exitcode.Userf("--where %s: %q is not a number", c, c.Value)
		}
	}
	return nil
}

func (c Cond) String() string { return c.Key + c.Op + c.Value }

func fieldNames() []string {
	var out []string
	for k := range columns {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// where is f as SQL conditions on entries e, with their arguments from
// $first on.
type where struct {
	parts []string
	args  []any
	// probe finds a condition's entries by a lookup per entry (its
	// table's key is the entry's ID first) rather than as a set found
	// once: for the newest few of many, where the entries are walked
	// newest first and the walk stops at the few.
	probe bool
}

// in is the condition that an entry has a row in table (config, metrics,
// tags) where cond holds, or, with not, has none.
func (w *where) in(not bool, table, cond string) string {
	var s string
	if w.probe {
		s = "EXISTS (SELECT 1 FROM " + table + " x WHERE x.entry = e.id AND " + cond + ")"
	} else {
		s = "e.id IN (SELECT entry FROM " + table + " WHERE " + cond + ")"
	}
	if not {
		return "NOT " + s
	}
	return s
}

func (w *where) arg(v any) string {
	w.args = append(w.args, v)
	return "$" + strconv.Itoa(len(w.args))
}

func (w *where) add(s string) { w.parts = append(w.parts, s) }

func (w *where) sql() string {
	if len(w.parts) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(w.parts, " AND ")
}

func (f Filter) where() *where {
	w := &where{probe: f.Limit > 0}
	eq := func(col, v string) {
		if v != "" {
			w.add(col + " = " + w.arg(v))
		}
	}
	eq("e.workload", f.Workload)
	eq("e.host", f.Host)
	eq("e.kind", f.Kind)
	eq("e.tool", f.Tool)
	if f.Target != "" {
		kind, version, _ := strings.Cut(strings.Replace(f.Target, ":", " ", 1), " ")
		eq("e.target_kind", kind)
		if version != "" {
			w.add("e.target_version LIKE " + w.arg(likeEscape(version)+"%") + ` ESCAPE '\'`)
		}
	}
	for _, t := range f.Tags {
		w.add(w.in(false, "tags", "tag = "+w.arg(t)))
	}
	if !f.Since.IsZero() {
		w.add("e.started_at >= " + w.arg(f.Since.UnixMicro()))
	}
	if !f.Until.IsZero() {
		w.add("e.started_at < " + w.arg(f.Until.UnixMicro()))
	}
	for _, c := range f.Where {
		w.add(c.sql(w))
	}
	return w
}

func (c Cond) sql(w *where) string {
	op := c.Op
	if op == "~" {
		op = "LIKE"
	}
	value := func() string {
		if c.Op == "~" {
			return w.arg("%"+likeEscape(c.Value)+"%") + ` ESCAPE '\'`
		}
		return w.arg(c.Value)
	}
	num, isNum := strconv.ParseFloat(c.Value, 64)
	switch {
	// Each condition is a set of entries, found once by its index, but
	// for the newest few (where.probe): on 10,000 entries a subquery per
	// entry, all of them walked, took 360 ms.
	case c.Key == "tag":
		return w.in(c.Op == "!=", "tags", "tag = "+w.arg(c.Value))
	case strings.HasPrefix(c.Key, "metric."):
		return w.in(false, "metrics", "key = "+w.arg(strings.TrimPrefix(c.Key, "metric."))+" AND value "+op+" "+w.arg(num))
	case strings.HasPrefix(c.Key, "config."):
		key := w.arg(strings.TrimPrefix(c.Key, "config."))
		// A number compares as one, so that vus=8 finds 8 however written;
		// != is true of an entry without the key too.
		var cmp string
		if isNum == nil && c.Op != "~" {
			cmp = "num " + op + " " + w.arg(num)
		} else {
			cmp = "value " + op + " " + value()
		}
		if c.Op == "!=" {
			return w.in(true, "config", "key = "+key+" AND "+strings.Replace(cmp, "!=", "=", 1))
		}
		return w.in(false, "config", "key = "+key+" AND "+cmp)
	}
	return "e." + columns[c.Key] + " " + op + " " + value()
}

func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`).Replace(s)
}

const entryColumns = `e.id, e.kind, e.tool, e.workload, e.target_kind, e.target_version, e.target_url, e.host, e.name,
	e.started_at, e.seconds, e.primary_metric, e.verdict, e.commit_ref, e.path, e.size, e.schema_version, e.recorded_at,
	e.config_json, e.metrics_json`

// List is the entries f picks, the newest first, each with its config,
// metrics and tags.
func (c *Catalog) List(ctx context.Context, f Filter) ([]*Entry, error) {
	return c.list(ctx, f, "DESC")
}

func (c *Catalog) list(ctx context.Context, f Filter, order string) ([]*Entry, error) {
	w := f.where()
	sel := `SELECT ` + entryColumns + ` FROM entries e` + w.sql() + ` ORDER BY e.started_at ` + order + `, e.id`
	if f.Limit > 0 {
		// The newest Limit, whichever order they are returned in.
		sel = `SELECT * FROM (SELECT ` + entryColumns + ` FROM entries e` + w.sql() + ` ORDER BY e.started_at DESC, e.id LIMIT ` +
			strconv.Itoa(f.Limit) + `) e ORDER BY e.started_at ` + order + `, e.id`
	}
	rows, err := c.db.QueryContext(ctx, c.q(sel), w.args...)
	if err != nil {
		return nil, c.fail("cannot read it", err)
	}
	var out []*Entry
	byID := map[string]*Entry{}
	for rows.Next() {
		e, err := scanEntry(rows)
		if err != nil {
			rows.Close()
			return nil, c.fail("cannot read it", err)
		}
		e.Tags = []string{}
		out = append(out, e)
		byID[e.ID] = e
	}
	if err := closeRows(rows); err != nil {
		return nil, c.fail("cannot read it", err)
	}
	return out, c.tags(ctx, out, byID)
}

// tagsAtOnce is how many entries' tags one query reads: fewer than
// either backend's limit on a statement's parameters.
const tagsAtOnce = 500

// tags fills the entries es, byID by their IDs, with their tags: a query
// per tagsAtOnce entries, by their IDs, not the filter again (which, run
// twice, was half of a filtered list's time).
func (c *Catalog) tags(ctx context.Context, es []*Entry, byID map[string]*Entry) error {
	for len(es) > 0 {
		n := min(len(es), tagsAtOnce)
		marks, args := make([]string, n), make([]any, n)
		for i, e := range es[:n] {
			marks[i], args[i] = "$"+strconv.Itoa(i+1), e.ID
		}
		es = es[n:]
		err := c.each(ctx, `SELECT entry, tag FROM tags WHERE entry IN (`+strings.Join(marks, ", ")+`) ORDER BY entry, tag`, args, func(r *sql.Rows) error {
			var id, t string
			if err := r.Scan(&id, &t); err != nil {
				return err
			}
			byID[id].Tags = append(byID[id].Tags, t)
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func (c *Catalog) each(ctx context.Context, q string, args []any, f func(*sql.Rows) error) error {
	rows, err := c.db.QueryContext(ctx, c.q(q), args...)
	if err != nil {
		return c.fail("cannot read it", err)
	}
	for rows.Next() {
		if err := f(rows); err != nil {
			rows.Close()
			return c.fail("cannot read it", err)
		}
	}
	if err := closeRows(rows); err != nil {
		return c.fail("cannot read it", err)
	}
	return nil
}

func closeRows(r *sql.Rows) error {
	err := r.Err()
	if cerr := r.Close(); err == nil {
		err = cerr
	}
	return err
}

func scanEntry(r *sql.Rows) (*Entry, error) {
	var e Entry
	var started, recorded int64
	var cfg, mets string
	err := r.Scan(&e.ID, &e.Kind, &e.Tool, &e.Workload, &e.TargetKind, &e.TargetVersion, &e.TargetURL, &e.Host, &e.Name,
		&started, &e.Seconds, &e.Primary, &e.Verdict, &e.Commit, &e.Path, &e.Size, &e.Schema, &recorded, &cfg, &mets)
	if err != nil {
		return nil, err
	}
	e.StartedAt = time.UnixMicro(started).UTC()
	e.RecordedAt = time.UnixMicro(recorded).UTC()
	if err := json.Unmarshal([]byte(cfg), &e.Config); err != nil {
		return nil, err
	}
	return &e, json.Unmarshal([]byte(mets), &e.Metrics)
}

func ptr(n sql.NullFloat64) *float64 {
	if !n.Valid {
		return nil
	}
	return &n.Float64
}

// Get is the entry id names: the whole ID, or a start of it that only
// it has (four characters at least).
func (c *Catalog) Get(ctx context.Context, id string) (*Entry, error) {
	full, err := c.resolve(ctx, id)
	if err != nil {
		return nil, err
	}
	got, err := c.List(ctx, Filter{Where: []Cond{{Key: "id", Op: "=", Value: full}}})
	if err != nil {
		return nil, err
	}
	if len(got) == 0 {
		return nil, ErrNotFound{id}
	}
	return got[0], nil
}

// resolve is the whole ID that id, or a start of it, names.
func (c *Catalog) resolve(ctx context.Context, id string) (string, error) {
	id = strings.ToLower(strings.TrimSpace(id))
	if len(id) < 4 || strings.Trim(id, "0123456789abcdef") != "" {
		return "", exitcode.Userf("%q is not a run ID: give at least four of the hex digits dbrig runs prints", id)
	}
	rows, err := c.db.QueryContext(ctx, c.q(`SELECT id FROM entries WHERE id >= $1 AND id < $2 ORDER BY id LIMIT 2`), id, id+"g")
	if err != nil {
		return "", c.fail("cannot read it", err)
	}
	var found []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			rows.Close()
			return "", c.fail("cannot read it", err)
		}
		found = append(found, s)
	}
	if err := closeRows(rows); err != nil {
		return "", c.fail("cannot read it", err)
	}
	switch len(found) {
	case 0:
		return "", ErrNotFound{id}
	case 1:
		return found[0], nil
	}
	return "", exitcode.Userf("run ID %s is ambiguous: %s and %s both start so; give more of it", id, ShortID(found[0]), ShortID(found[1]))
}

// Count is the number of entries f picks, whatever its limit.
func (c *Catalog) Count(ctx context.Context, f Filter) (int, error) {
	w := f.where()
	var n int
	if err := c.db.QueryRowContext(ctx, c.q(`SELECT count(*) FROM entries e`+w.sql()), w.args...).Scan(&n); err != nil {
		return 0, c.fail("cannot read it", err)
	}
	return n, nil
}

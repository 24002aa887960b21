package catalog

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/dbrig/dbrig/internal/exitcode"
)

// migrations are the catalogue's schema, a version per step: a catalogue
// at version N has had the first N applied. A step is only ever added,
// never changed, so that every catalogue a dbrig made can be brought up
// to date; BLOB stands for the backend's type of bytes.
var migrations = [][]string{
	{
		`CREATE TABLE entries (
			id TEXT PRIMARY KEY,
			kind TEXT NOT NULL,
			tool TEXT NOT NULL,
			workload TEXT NOT NULL,
			target_kind TEXT NOT NULL,
			target_version TEXT NOT NULL,
			target_url TEXT NOT NULL,
			host TEXT NOT NULL,
			name TEXT NOT NULL,
			started_at BIGINT NOT NULL,
			seconds DOUBLE PRECISION NOT NULL,
			primary_metric TEXT NOT NULL,
			verdict TEXT NOT NULL,
			commit_ref TEXT NOT NULL,
			path TEXT NOT NULL,
			size BIGINT NOT NULL,
			schema_version INTEGER NOT NULL,
			recorded_at BIGINT NOT NULL)`,
		`CREATE INDEX entries_started ON entries (started_at)`,
		`CREATE INDEX entries_workload ON entries (workload, started_at)`,
		`CREATE TABLE config (
			entry TEXT NOT NULL,
			key TEXT NOT NULL,
			value TEXT NOT NULL,
			num DOUBLE PRECISION,
			PRIMARY KEY (entry, key))`,
		`CREATE INDEX config_key ON config (key, value)`,
		`CREATE TABLE metrics (
			entry TEXT NOT NULL,
			key TEXT NOT NULL,
			label TEXT NOT NULL,
			unit TEXT NOT NULL,
			higher INTEGER NOT NULL,
			value DOUBLE PRECISION NOT NULL,
			low DOUBLE PRECISION,
			high DOUBLE PRECISION,
			db DOUBLE PRECISION,
			client DOUBLE PRECISION,
			PRIMARY KEY (entry, key))`,
		`CREATE INDEX metrics_key ON metrics (key, entry)`,
		`CREATE TABLE tags (
			entry TEXT NOT NULL,
			tag TEXT NOT NULL,
			PRIMARY KEY (entry, tag))`,
		`CREATE INDEX tags_tag ON tags (tag)`,
		`CREATE TABLE bodies (
			entry TEXT PRIMARY KEY,
			gz BLOB NOT NULL)`,
	},
	// 2: each entry's config and metrics as JSON beside their rows, so
	// that a list reads an entry in one row; filled for the entries
	// already there by fillJSON.
	{
		`ALTER TABLE entries ADD COLUMN config_json TEXT NOT NULL DEFAULT '{}'`,
		`ALTER TABLE entries ADD COLUMN metrics_json TEXT NOT NULL DEFAULT '[]'`,
	},
	// 3: conditions on a number find their entries by an index.
	{
		`CREATE INDEX config_num ON config (key, num)`,
		`CREATE INDEX metrics_value ON metrics (key, value)`,
	},
}

// fills are what a step does beyond its SQL, by the version it makes.
var fills = map[int]func(ctx context.Context, c *Catalog, tx *sql.Tx) error{2: fillJSON}

// SchemaVersion is the catalogue schema this dbrig writes.
var SchemaVersion = len(migrations)

// migrate brings the catalogue up to SchemaVersion, in one transaction
// per step, and refuses one a newer dbrig made: its tables may hold what
// this one would lose.
func (c *Catalog) migrate(ctx context.Context) error {
	if _, err := c.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS catalog_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`); err != nil {
		return c.fail("cannot make its tables", err)
	}
	for {
		v, err := c.version(ctx)
		if err != nil {
			return err
		}
		if v > SchemaVersion {
			return storeError{exitcode.Userf("the catalogue %s is at schema version %d, which a newer dbrig made; this one knows up to %d: use the newer dbrig, or another --catalog",
				c.Name(), v, SchemaVersion)}
		}
		if v == SchemaVersion {
			return nil
		}
		if err := c.step(ctx, v); err != nil {
			return err
		}
	}
}

// version is the schema version the catalogue is at, 0 when new.
func (c *Catalog) version(ctx context.Context) (int, error) {
	var s string
	err := c.db.QueryRowContext(ctx, c.q(`SELECT value FROM catalog_meta WHERE key = 'schema_version'`)).Scan(&s)
	if err == sql.ErrNoRows {
		return 0, nil
	}
	if err != nil {
		return 0, c.fail("cannot read its schema version", err)
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, storeError{exitcode.Userf("the catalogue %s says its schema version is %q: it is not a dbrig catalogue, or it is damaged", c.Name(), s)}
	}
	return v, nil
}

// step applies migration v, moving the catalogue to v+1 unless another
// dbrig did first (then the version it wrote stops this one's update).
func (c *Catalog) step(ctx context.Context, v int) error {
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return c.fail("cannot update its schema", err)
	}
	defer tx.Rollback()
	var res sql.Result
	if v == 0 {
		res, err = tx.ExecContext(ctx, c.q(`INSERT INTO catalog_meta (key, value) VALUES ('schema_version', '1') ON CONFLICT (key) DO NOTHING`))
	} else {
		res, err = tx.ExecContext(ctx, c.q(`UPDATE catalog_meta SET value = $1 WHERE key = 'schema_version' AND value = $2`), strconv.Itoa(v+1), strconv.Itoa(v))
	}
	if err != nil {
		return c.fail("cannot update its schema", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil // another dbrig took this step
	}
	for _, s := range migrations[v] {
		if _, err := tx.ExecContext(ctx, strings.ReplaceAll(s, "BLOB", c.b.Blob)); err != nil {
			return c.fail(fmt.Sprintf("cannot update its schema to version %d", v+1), err)
		}
	}
	if fill := fills[v+1]; fill != nil {
		if err := fill(ctx, c, tx); err != nil {
			return c.fail(fmt.Sprintf("cannot update its schema to version %d", v+1), err)
		}
	}
	if err := tx.Commit(); err != nil {
		return c.fail("cannot update its schema", err)
	}
	return nil
}

// fillJSON writes each entry's config and metrics rows into its JSON
// columns.
func fillJSON(ctx context.Context, c *Catalog, tx *sql.Tx) error {
	cfg := map[string]map[string]string{}
	mets := map[string][]Metric{}
	rows, err := tx.QueryContext(ctx, `SELECT entry, key, value FROM config`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var id, k, v string
		if err := rows.Scan(&id, &k, &v); err != nil {
			rows.Close()
			return err
		}
		if cfg[id] == nil {
			cfg[id] = map[string]string{}
		}
		cfg[id][k] = v
	}
	if err := closeRows(rows); err != nil {
		return err
	}
	rows, err = tx.QueryContext(ctx, `SELECT entry, key, label, unit, higher, value, low, high, db, client FROM metrics ORDER BY entry, key`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var id string
		var m Metric
		var higher int
		var low, high, db, client sql.NullFloat64
		if err := rows.Scan(&id, &m.Key, &m.Label, &m.Unit, &higher, &m.Value, &low, &high, &db, &client); err != nil {
			rows.Close()
			return err
		}
		m.Higher = higher != 0
		m.Low, m.High, m.DB, m.Client = ptr(low), ptr(high), ptr(db), ptr(client)
		mets[id] = append(mets[id], m)
	}
	if err := closeRows(rows); err != nil {
		return err
	}
	ids := map[string]bool{}
	for id := range cfg {
		ids[id] = true
	}
	for id := range mets {
		ids[id] = true
	}
	for id := range ids {
		cj, _ := json.Marshal(cfg[id])
		mj, _ := json.Marshal(mets[id])
		if mets[id] == nil {
			mj = []byte("[]")
		}
		if cfg[id] == nil {
			cj = []byte("{}")
		}
		if _, err := tx.ExecContext(ctx, c.q(`UPDATE entries SET config_json = $1, metrics_json = $2 WHERE id = $3`), string(cj), string(mj), id); err != nil {
			return err
		}
	}
	return nil
}

package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/jackc/pgx/v5"
)

var _ dbtarget.Prewarmer = (*Target)(nil)

// benchRelations lists the current database's relations that have storage
// in its user schemas, with their TOAST tables and TOAST indexes, which
// live in pg_toast. Temporary relations of any session are left out: only
// their own session could read them.
const benchRelations = `
WITH user_rel AS (
	SELECT c.oid, c.reltoastrelid
	FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
	WHERE c.relkind IN ('r', 'i', 'm', 't')
	  AND c.relpersistence <> 't'
	  AND n.nspname NOT IN ('pg_catalog', 'information_schema')
	  AND n.nspname NOT LIKE 'pg\_toast%'
	  AND n.nspname NOT LIKE 'pg\_temp\_%'
), toast AS (
	SELECT reltoastrelid AS oid FROM user_rel WHERE reltoastrelid <> 0
), rels AS (
	SELECT oid FROM user_rel
	UNION SELECT oid FROM toast
	UNION SELECT i.indexrelid FROM pg_index i JOIN toast t ON i.indrelid = t.oid
)`

// The distinct (relfilenode, block) pairs: a block is in shared buffers at
// most once, but counting distinct keeps the figure honest regardless.
// Blocks past the relation's current size (left by a truncation) do not
// count.
const residencySQL = benchRelations + `, sized AS (
	SELECT pg_relation_filenode(oid) AS filenode,
	       pg_relation_size(oid, 'main') / current_setting('block_size')::bigint AS blocks
	FROM rels
)
SELECT
	(SELECT count(*) FROM sized),
	(SELECT coalesce(sum(blocks), 0)::bigint FROM sized),
	(SELECT count(*) FROM (
		SELECT DISTINCT b.relfilenode, b.relblocknumber
		FROM pg_buffercache b JOIN sized s ON b.relfilenode = s.filenode
		WHERE b.reldatabase = (SELECT oid FROM pg_database WHERE datname = current_database())
		  AND b.relforknumber = 0
		  AND b.relblocknumber < s.blocks
	) resident)`

// Prewarm loads every table, index and TOAST relation of the database
// into shared buffers with pg_prewarm, then measures through
// pg_buffercache how much of it is resident. When shared_buffers is
// smaller than the data, the later relations evict the earlier ones and
// the fraction says so. It creates the pg_prewarm and pg_buffercache
// extensions when missing, which takes a superuser.
func (t *Target) Prewarm(ctx context.Context) (dbtarget.Residency, error) {
	conn, err := t.connectForResidency(ctx, "pg_prewarm", "pg_buffercache")
	if err != nil {
		return dbtarget.Residency{}, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	rows, err := conn.Query(ctx, benchRelations+` SELECT oid::regclass::text AS name, oid FROM rels ORDER BY 2`)
	if err != nil {
		return dbtarget.Residency{}, fmt.Errorf("prewarm: listing relations: %w", err)
	}
	type rel struct {
		name string
		oid  uint32
	}
	var rels []rel
	for rows.Next() {
		var r rel
		if err := rows.Scan(&r.name, &r.oid); err != nil {
			return dbtarget.Residency{}, fmt.Errorf("prewarm: listing relations: %w", err)
		}
		rels = append(rels, r)
	}
	if err := rows.Err(); err != nil {
		return dbtarget.Residency{}, fmt.Errorf("prewarm: listing relations: %w", err)
	}
	for _, r := range rels {
		if _, err := conn.Exec(ctx, `SELECT pg_prewarm($1::regclass, 'buffer')`, r.oid); err != nil {
			return dbtarget.Residency{}, fmt.Errorf("pg_prewarm(%s): %w", r.name, err)
		}
	}
	return measure(ctx, conn)
}

// MeasureResidency is Prewarm's measurement alone: how much of the
// database's relations is in shared buffers now, loading nothing.
func (t *Target) MeasureResidency(ctx context.Context) (dbtarget.Residency, error) {
	conn, err := t.connectForResidency(ctx, "pg_buffercache")
	if err != nil {
		return dbtarget.Residency{}, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	return measure(ctx, conn)
}

func (t *Target) connectForResidency(ctx context.Context, extensions ...string) (*pgx.Conn, error) {
	conn, err := t.connect(ctx, t.cfg)
	if err != nil {
		return nil, err
	}
	for _, ext := range extensions {
		if _, err := conn.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS "+ext); err != nil {
			conn.Close(context.WithoutCancel(ctx))
			if strings.Contains(err.Error(), "could not open extension control file") {
				return nil, exitcode.Userf("%s is not installed on this server: install the contrib package "+
					"(Debian's postgresql-contrib, or the postgresql-NN package of the server's version)", ext)
			}
			if strings.Contains(err.Error(), "permission denied") {
				return nil, exitcode.Userf("creating extension %s: %v: connect as a superuser, or have one run CREATE EXTENSION %s", ext, err, ext)
			}
			return nil, fmt.Errorf("creating extension %s: %w", ext, err)
		}
	}
	return conn, nil
}

func measure(ctx context.Context, conn *pgx.Conn) (dbtarget.Residency, error) {
	var r dbtarget.Residency
	var rels int64
	if err := conn.QueryRow(ctx, residencySQL).Scan(&rels, &r.Blocks, &r.Resident); err != nil {
		return dbtarget.Residency{}, fmt.Errorf("measuring residency through pg_buffercache: %w", err)
	}
	r.Relations = int(rels)
	if r.Blocks > 0 {
		r.Fraction = float64(r.Resident) / float64(r.Blocks)
	}
	return r, nil
}

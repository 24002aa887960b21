package mariadb

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/dbrig/dbrig/internal/dbtarget"
)

var _ dbtarget.Prewarmer = (*Target)(nil)

// Prewarm reads every index of every InnoDB table of the database whole
// (COUNT(*) forced through each index: the clustered one holds the rows),
// which brings their pages into the buffer pool, then measures what is
// resident from information_schema.INNODB_BUFFER_PAGE against the
// indexes' leaf pages in mysql.innodb_index_stats, refreshed by ANALYZE
// TABLE (so it needs persistent statistics, InnoDB's default, and the
// privilege to read the mysql schema). Columns stored off the row's page
// (long BLOBs and TEXTs) are not read. When the pool is smaller than the
// data, the later indexes evict the earlier ones and the fraction says so.
func (t *Target) Prewarm(ctx context.Context) (dbtarget.Residency, error) {
	c, err := t.db.SQL.Conn(ctx)
	if err != nil {
		return dbtarget.Residency{}, err
	}
	defer c.Close()
	indexes, err := innodbIndexes(ctx, c)
	if err != nil {
		return dbtarget.Residency{}, err
	}
	tables := map[string]bool{}
	for _, ix := range indexes {
		if !tables[ix.table] {
			tables[ix.table] = true
			if err := analyze(ctx, c, ix.table); err != nil {
				return dbtarget.Residency{}, err
			}
		}
		var n int64
		q := "SELECT COUNT(*) FROM " + quote(ix.table) + " FORCE INDEX (" + quote(ix.name) + ")"
		if err := c.QueryRowContext(ctx, q).Scan(&n); err != nil {
			return dbtarget.Residency{}, fmt.Errorf("prewarm %s.%s: %w", ix.table, ix.name, err)
		}
	}
	return residency(ctx, c, len(indexes))
}

type index struct{ table, name string }

func innodbIndexes(ctx context.Context, c *sql.Conn) ([]index, error) {
	rows, err := c.QueryContext(ctx, `SELECT DISTINCT s.table_name, s.index_name
FROM information_schema.statistics s JOIN information_schema.tables t
  ON t.table_schema = s.table_schema AND t.table_name = s.table_name
WHERE s.table_schema = DATABASE() AND t.engine = 'InnoDB' AND t.table_type = 'BASE TABLE'
ORDER BY s.table_name, s.index_name <> 'PRIMARY', s.index_name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []index
	for rows.Next() {
		var ix index
		if err := rows.Scan(&ix.table, &ix.name); err != nil {
			return nil, err
		}
		out = append(out, ix)
	}
	return out, rows.Err()
}

// analyze refreshes a table's statistics, which InnoDB otherwise updates
// only after a tenth of the table changed.
func analyze(ctx context.Context, c *sql.Conn, table string) error {
	rows, err := c.QueryContext(ctx, "ANALYZE TABLE "+quote(table))
	if err != nil {
		return fmt.Errorf("analyze %s: %w", table, err)
	}
	for rows.Next() {
	}
	rows.Close()
	return rows.Err()
}

func quote(name string) string { return "`" + strings.ReplaceAll(name, "`", "``") + "`" }

// residency compares the pages of the database's tables in the buffer
// pool with their size in pages. INNODB_BUFFER_PAGE names a page's table
// as `db`.`table`.
func residency(ctx context.Context, c *sql.Conn, relations int) (dbtarget.Residency, error) {
	r := dbtarget.Residency{Relations: relations}
	err := c.QueryRowContext(ctx, "SELECT "+
		"(SELECT COALESCE(SUM(stat_value), 0) FROM mysql.innodb_index_stats "+
		"WHERE database_name = DATABASE() AND stat_name = 'n_leaf_pages'), "+
		"(SELECT COUNT(*) FROM information_schema.innodb_buffer_page "+
		"WHERE LEFT(table_name, CHAR_LENGTH(@p := CONCAT('`', REPLACE(DATABASE(), '`', '``'), '`.'))) = @p "+
		"AND page_type IN ('INDEX', 'BLOB'))").
		Scan(&r.Blocks, &r.Resident)
	if err != nil {
		return r, fmt.Errorf("measure residency: %w", err)
	}
	// The size is the indexes' leaf pages, as ANALYZE TABLE counted them
	// (their allocated size would count pages reserved and unused); the
	// few upper-level pages resident with them can take the count past
	// it, and never more than all of it is resident.
	r.Resident = min(r.Resident, r.Blocks)
	if r.Blocks > 0 {
		r.Fraction = float64(r.Resident) / float64(r.Blocks)
	}
	return r, nil
}

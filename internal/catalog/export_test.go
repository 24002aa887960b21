package catalog

import (
	"context"
	"strconv"
)

// SetVersionForTest says the catalogue is at schema version v, as a
// newer dbrig's would.
func SetVersionForTest(c *Catalog, v int) error {
	_, err := c.db.ExecContext(context.Background(), c.q(`UPDATE catalog_meta SET value = $1 WHERE key = 'schema_version'`), strconv.Itoa(v))
	return err
}

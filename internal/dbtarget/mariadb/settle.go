package mariadb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
)

var _ dbtarget.Settler = (*Target)(nil)

// settlePoll is how often Settle reads the server's progress; settleQuiet
// is how many reads in a row must show no progress before it stops
// waiting for it.
const (
	settlePoll  = 500 * time.Millisecond
	settleQuiet = 4
)

// Settle finishes what InnoDB carries over from the last run: it waits
// until the purge of old row versions stops making progress (the history
// list stops falling), then has the page cleaner write every dirty page
// by setting innodb_max_dirty_pages_pct (and its low-water mark) to 0,
// waits until the dirty pages stop falling, and restores both settings.
// It needs the privilege to SET GLOBAL.
func (t *Target) Settle(ctx context.Context) (string, error) {
	c, err := t.db.SQL.Conn(ctx)
	if err != nil {
		return "", err
	}
	defer c.Close()
	history, err := waitFalling(ctx, c, "INNODB_HISTORY_LIST_LENGTH")
	if err != nil {
		return "", err
	}
	var pct, lwm string
	if err := c.QueryRowContext(ctx, "SELECT @@GLOBAL.innodb_max_dirty_pages_pct, @@GLOBAL.innodb_max_dirty_pages_pct_lwm").Scan(&pct, &lwm); err != nil {
		return "", err
	}
	// The low-water mark may not exceed the maximum: lowered first,
	// restored last.
	if _, err := c.ExecContext(ctx, "SET GLOBAL innodb_max_dirty_pages_pct_lwm = 0, GLOBAL innodb_max_dirty_pages_pct = 0"); err != nil {
		return "", fmt.Errorf("flush dirty pages: %w", err)
	}
	dirty, waitErr := waitFalling(ctx, c, "INNODB_BUFFER_POOL_PAGES_DIRTY")
	_, restoreErr := c.ExecContext(context.WithoutCancel(ctx),
		"SET GLOBAL innodb_max_dirty_pages_pct = "+pct+", GLOBAL innodb_max_dirty_pages_pct_lwm = "+lwm)
	if err := errors.Join(waitErr, restoreErr); err != nil {
		return "", err
	}
	return fmt.Sprintf("InnoDB history list %d → %d, dirty pages %d → %d", history[0], history[1], dirty[0], dirty[1]), nil
}

// waitFalling reads a status counter until it is 0 or has not fallen for
// settleQuiet reads, and returns its first and last values.
func waitFalling(ctx context.Context, c *sql.Conn, name string) ([2]int64, error) {
	var first, low int64
	quiet := 0
	for i := 0; ; i++ {
		var v int64
		if err := c.QueryRowContext(ctx, "SELECT variable_value FROM information_schema.global_status WHERE variable_name = ?", name).Scan(&v); err != nil {
			return [2]int64{}, fmt.Errorf("read %s: %w", name, err)
		}
		switch {
		case i == 0:
			first, low = v, v
		case v < low:
			low, quiet = v, 0
		default:
			quiet++
		}
		if v == 0 || quiet >= settleQuiet {
			return [2]int64{first, v}, nil
		}
		select {
		case <-ctx.Done():
			return [2]int64{first, v}, ctx.Err()
		case <-time.After(settlePoll):
		}
	}
}

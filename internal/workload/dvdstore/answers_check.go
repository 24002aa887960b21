package dvdstore

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/exitcode"
)

// CheckResult compares the category-sales answers a dvd-reports run kept
// in its document (its extra section) with the same totals recomputed on
// t by SQL of their own (answers.sql), one line a category; ok is false
// at the first difference in cents, which the line names. A document
// without the table, or from another build, is the user's to fix.
func (w *dvdstore) CheckResult(ctx context.Context, t dbtarget.Target, extra map[string]any, out io.Writer) (bool, error) {
	tab, found, err := readSalesTable(extra)
	switch {
	case err != nil:
		return false, exitcode.Userf("the result's %s: %v", salesKey, err)
	case !found:
		return false, exitcode.Userf("the result keeps no %s answers (extra.%s): give the document of a %s run by this dbrig",
			ReportsName, salesKey, ReportsName)
	}
	win, err := tab.window()
	if err != nil {
		return false, exitcode.Userf("the result's %s window: %v", salesKey, err)
	}
	q, b, err := openBuilt(ctx, t, "answers.sql")
	if err != nil {
		return false, err
	}
	defer b.Close()
	if built := dataOf(b.Meta); built != tab.Data {
		return false, exitcode.Userf("the result's reports read a build of seed %s with %d customers, %d products and %d orders; this target's has seed %s, %d, %d and %d: check it against the target it ran on",
			tab.Data.Seed, tab.Data.Customers, tab.Data.Products, tab.Data.Orders, built.Seed, built.Customers, built.Products, built.Orders)
	}
	db, err := recompute(ctx, b.S, q.Get("category_sales"), win, tab.Data.Orders)
	if err != nil {
		return false, fmt.Errorf("recomputing %s: %w", salesKey, err)
	}
	return tab.compare(db, out), nil
}

// window is the kept table's dates.
func (t salesTable) window() (window, error) {
	var w window
	for _, d := range []struct {
		to   *time.Time
		from string
	}{{&w.half, t.Window.Half}, {&w.quarter, t.Window.Quarter}, {&w.month, t.Window.Month}, {&w.anchor, t.Window.Anchor}} {
		v, err := time.Parse(time.DateOnly, d.from)
		if err != nil {
			return w, err
		}
		*d.to = v
	}
	return w, nil
}

// recompute reads every category's totals in cents, by category (index
// 1 to 16), through query (answers.sql's category_sales).
func recompute(ctx context.Context, s dbtarget.Session, query string, w window, orders int64) ([][3]int64, error) {
	rows, err := s.Query(ctx, query, w.month, w.quarter, w.half, w.anchor, orders)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make([][3]int64, len(categories)+1)
	for rows.Next() {
		var cat int
		var sales [3]float64
		if err := rows.Scan(&cat, &sales[0], &sales[1], &sales[2]); err != nil {
			return nil, err
		}
		if cat < 1 || cat > len(categories) {
			return nil, fmt.Errorf("category %d is not one of the 16", cat)
		}
		out[cat] = toCents(sales)
	}
	return out, rows.Err()
}

// compare writes a line per kept row, PASS or FAIL against db, and then
// the table's own checksums; it stops at the first FAIL.
func (t salesTable) compare(db [][3]int64, out io.Writer) bool {
	for _, r := range t.Rows {
		if r.Category < 1 || r.Category > len(categories) {
			fmt.Fprintf(out, "FAIL  %s: category %d is not one of the 16\n", salesKey, r.Category)
			return false
		}
		name := categories[r.Category-1]
		kept, want := r.cents(), db[r.Category]
		for k, win := range salesWindows {
			if kept[k] != want[k] {
				fmt.Fprintf(out, "FAIL  %s %d %s, %s: the result says %s, the database %s\n",
					salesKey, r.Category, name, win, money(kept[k]), money(want[k]))
				return false
			}
		}
		if sum := t.rowSum(r); sum != r.Checksum {
			fmt.Fprintf(out, "FAIL  %s %d %s checksum: the result says %q, its totals give %s\n", salesKey, r.Category, name, r.Checksum, sum)
			return false
		}
		fmt.Fprintf(out, "PASS  %s %d %s: %s, %s, %s\n", salesKey, r.Category, name, money(kept[0]), money(kept[1]), money(kept[2]))
	}
	sealed := t
	sealed.Rows = append([]salesRow(nil), t.Rows...)
	sealed.seal()
	if sealed.Checksum != t.Checksum {
		fmt.Fprintf(out, "FAIL  %s checksum: the result says %q, its totals give %s\n", salesKey, t.Checksum, sealed.Checksum)
		return false
	}
	fmt.Fprintf(out, "PASS  %s checksum %s (%d categories)\n", salesKey, t.Checksum, len(t.Rows))
	return true
}

package dvdstore

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/dbrig/dbrig/internal/human"
)

// salesKey is where a dvd-reports run keeps its answers in the
// document's extra section (a run beside others prefixes it with the
// workload's name, as every extra key is).
const salesKey = "category_sales"

// salesVersion is the kept table's layout: a reader refuses another.
const salesVersion = 1

// salesWindows names the three totals of a report, in its columns' order.
var salesWindows = [3]string{"month", "quarter", "half-year"}

// answer is what one category's reports said during a run: its totals in
// cents, how many requests said so, and how many said something else.
type answer struct {
	cents     [3]int64
	n, differ int64
}

// add counts one request's totals against the first request's.
func (a *answer) add(sales [3]float64) {
	c := toCents(sales)
	switch {
	case a.n == 0 && a.differ == 0:
		a.cents, a.n = c, 1
	case c == a.cents:
		a.n++
	default:
		a.differ++
	}
}

func toCents(sales [3]float64) [3]int64 {
	var c [3]int64
	for k, v := range sales {
		c[k] = int64(math.Round(v * 100))
	}
	return c
}

// salesTable is the document's record of a run's category-sales
// answers: one row per category asked, with the window and the data the
// reports read, so that a check can recompute them on the database.
type salesTable struct {
	Version int         `json:"version"`
	Window  salesWindow `json:"window"`
	Data    salesData   `json:"data"`
	Rows    []salesRow  `json:"rows"`
	// Checksum covers the window and every row's totals in cents, in
	// category order; two runs that asked every category compare by it.
	Checksum string `json:"checksum"`
}

// salesWindow is the first day of each window and their common last day.
type salesWindow struct {
	Half    string `json:"half_year_from"`
	Quarter string `json:"quarter_from"`
	Month   string `json:"month_from"`
	Anchor  string `json:"to"`
}

// salesData is the build the reports read: the seed (a string, since a
// 64-bit seed is not exact as a JSON number) and the scale. Orders are
// the loaded ones, ids 1 to Orders: a run's orders come after them, and
// are dated the day they are written, after the window.
type salesData struct {
	Seed           string `json:"seed"`
	Customers      int64  `json:"customers"`
	Products       int64  `json:"products"`
	OrdersPerMonth int64  `json:"orders_per_month"`
	Orders         int64  `json:"orders"`
}

// salesRow is one category's report: its totals, how many requests gave
// them, how many gave other totals (0 unless the data changed during the
// run), and a checksum of the window and the totals in cents, which is
// the same in every run on the same data.
type salesRow struct {
	Category int     `json:"category"`
	Name     string  `json:"name"`
	Month    float64 `json:"month"`
	Quarter  float64 `json:"quarter"`
	Half     float64 `json:"half_year"`
	Answers  int64   `json:"answers"`
	Differed int64   `json:"differed,omitempty"`
	Checksum string  `json:"checksum"`
}

func (r salesRow) cents() [3]int64 { return toCents([3]float64{r.Month, r.Quarter, r.Half}) }

// newSalesTable makes the table of the answers by category (index 1 to
// 16; a category never asked has no row).
func newSalesTable(win window, m meta, answers []answer) *salesTable {
	t := &salesTable{Version: salesVersion, Window: salesWindow{
		Half: day(win.half), Quarter: day(win.quarter), Month: day(win.month), Anchor: day(win.anchor)},
		Data: salesData{Seed: strconv.FormatUint(m.seed, 10), Customers: m.scale.Customers, Products: m.scale.Products,
			OrdersPerMonth: m.scale.OrdersPerMonth, Orders: m.scale.Orders()}}
	for cat, a := range answers {
		if a.n == 0 {
			continue
		}
		t.Rows = append(t.Rows, salesRow{Category: cat, Name: categories[cat-1],
			Month: float64(a.cents[0]) / 100, Quarter: float64(a.cents[1]) / 100, Half: float64(a.cents[2]) / 100,
			Answers: a.n, Differed: a.differ})
	}
	t.seal()
	return t
}

func day(t time.Time) string { return t.Format(time.DateOnly) }

// seal sets the checksums from the window and the rows.
func (t *salesTable) seal() {
	all := sha256.New()
	for i := range t.Rows {
		r := &t.Rows[i]
		r.Checksum = t.rowSum(*r)
		fmt.Fprintln(all, r.Checksum)
	}
	t.Checksum = hex.EncodeToString(all.Sum(nil))[:16]
}

// rowSum is a row's checksum: the table's version, the window, the
// category and its three totals in cents; the request counts are not in
// it, since they vary from run to run.
func (t *salesTable) rowSum(r salesRow) string {
	c := r.cents()
	w := t.Window
	s := fmt.Sprintf("dvd-reports category_sales v%d %s %s %s %s %d %d %d %d",
		t.Version, w.Half, w.Quarter, w.Month, w.Anchor, r.Category, c[0], c[1], c[2])
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])[:16]
}

// lines are the table as the text summary shows it.
func (t *salesTable) lines() []string {
	w := t.Window
	out := []string{fmt.Sprintf("Category sales to %s, from %s (month), %s (quarter), %s (half-year); checksum %s:",
		w.Anchor, w.Month, w.Quarter, w.Half, t.Checksum)}
	var differed int64
	for _, r := range t.Rows {
		c := r.cents()
		out = append(out, fmt.Sprintf("  %2d %-12s %14s %14s %14s  %s", r.Category, r.Name,
			money(c[0]), money(c[1]), money(c[2]), r.Checksum))
		differed += r.Differed
	}
	if n := len(categories) - len(t.Rows); n > 0 {
		out = append(out, fmt.Sprintf("  %d categories never asked", n))
	}
	if differed > 0 {
		out = append(out, fmt.Sprintf("  %d answers differed from their category's first: the data changed during the run", differed))
	}
	return out
}

// money writes cents as an amount with its thousands grouped.
func money(cents int64) string {
	sign := ""
	if cents < 0 {
		sign, cents = "-", -cents
	}
	return sign + human.Thousands(float64(cents/100)) + fmt.Sprintf(".%02d", cents%100)
}

// readSalesTable finds the kept table among a document's extra entries,
// under its key alone or prefixed by a run beside others; ok is false
// where there is none.
func readSalesTable(extra map[string]any) (t salesTable, ok bool, err error) {
	for k, v := range extra {
		if k != salesKey && !strings.HasSuffix(k, ":"+salesKey) {
			continue
		}
		b, err := json.Marshal(v)
		if err == nil {
			err = json.Unmarshal(b, &t)
		}
		if err != nil {
			return t, true, fmt.Errorf("%s: %w", k, err)
		}
		if t.Version != salesVersion {
			return t, true, fmt.Errorf("%s: version %d, and this dbrig reads version %d", k, t.Version, salesVersion)
		}
		return t, true, nil
	}
	return t, false, nil
}

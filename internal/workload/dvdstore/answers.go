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

	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/human"
)

// salesKey is where a dvd-reports run keeps its answers in the
// document's extra section (a run beside others prefixes it with the
// workload's name, as every extra key is).
const salesKey = "category_sales"

// salesVersion is the kept table's layout: a reader refuses another.
const salesVersion = 1

// salesWindows names the three totals of a report, in its columns' order,
// and salesColumns the same as the tallies and the document name them.
var (
	salesWindows = [3]string{"month", "quarter", "half-year"}
	salesColumns = [3]string{"month", "quarter", "half_year"}
)

// The tally slots of a report run: for each category its answers and
// the sums of their three totals in cents, then the answers that differed
// from their virtual user's first for the category. Kept as tallies, the
// answers of a run's parts add up in a merge as a single run's do.
const (
	perCategory = 4
	tDiffered   = perCategory * 16
)

// salesSlot is category cat's slot k: 0 its answers, 1 to 3 its totals.
func salesSlot(cat, k int) int { return (cat-1)*perCategory + k }

var reportTallies = func() []string {
	names := make([]string, 0, tDiffered+1)
	for cat := 1; cat <= len(categories); cat++ {
		names = append(names, fmt.Sprintf("category_%d_answers", cat))
		for _, w := range salesColumns {
			names = append(names, fmt.Sprintf("category_%d_%s_cents", cat, w))
		}
	}
	return append(names, "category_answers_differed")
}()

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
	// Differed counts the answers that differed from others for their
	// category: 0 unless the data changed during the run.
	Differed int64 `json:"differed,omitempty"`
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

// salesRow is one category's report: its totals, how many requests in
// the window gave them, and a checksum of the window and the totals in
// cents, which is the same in every run on the same data.
type salesRow struct {
	Category int     `json:"category"`
	Name     string  `json:"name"`
	Month    float64 `json:"month"`
	Quarter  float64 `json:"quarter"`
	Half     float64 `json:"half_year"`
	Answers  int64   `json:"answers"`
	Checksum string  `json:"checksum"`
}

// dataOf is the build m as the table records it.
func dataOf(m meta) salesData {
	return salesData{Seed: strconv.FormatUint(m.seed, 10), Customers: m.scale.Customers, Products: m.scale.Products,
		OrdersPerMonth: m.scale.OrdersPerMonth, Orders: m.scale.Orders()}
}

func (r salesRow) cents() [3]int64 { return toCents([3]float64{r.Month, r.Quarter, r.Half}) }

// newSalesTable makes the table of a run's tallied answers (a category
// never asked in the window has no row). A category's totals are the
// means of its answers, which are all the same unless the data changed:
// a mean that is not a whole number of cents counts as differing too.
func newSalesTable(win window, m meta, tally driver.Tally) *salesTable {
	t := &salesTable{Version: salesVersion, Window: salesWindow{
		Half: day(win.half), Quarter: day(win.quarter), Month: day(win.month), Anchor: day(win.anchor)},
		Data: dataOf(m), Differed: tally[tDiffered]}
	for cat := 1; cat <= len(categories); cat++ {
		n := tally[salesSlot(cat, 0)]
		if n == 0 {
			continue
		}
		var c [3]float64
		for k := range c {
			sum := tally[salesSlot(cat, k+1)]
			if sum%n != 0 {
				t.Differed++
			}
			c[k] = float64(sum/n) / 100
		}
		t.Rows = append(t.Rows, salesRow{Category: cat, Name: categories[cat-1], Month: c[0], Quarter: c[1], Half: c[2], Answers: n})
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
	for _, r := range t.Rows {
		c := r.cents()
		out = append(out, fmt.Sprintf("  %2d %-12s %14s %14s %14s  %s", r.Category, r.Name,
			money(c[0]), money(c[1]), money(c[2]), r.Checksum))
	}
	if n := len(categories) - len(t.Rows); n > 0 {
		out = append(out, fmt.Sprintf("  %d categories never asked in the window", n))
	}
	if t.Differed > 0 {
		out = append(out, fmt.Sprintf("  %d answers differed from others for their category: the data changed during the run", t.Differed))
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

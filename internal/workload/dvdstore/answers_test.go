package dvdstore

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/server/postgres/pgtest"
	"github.com/dbrig/dbrig/internal/workload"
	"github.com/dbrig/dbrig/internal/workload/workloadtest"
)

// reportsDoc runs dvd-reports on tg for two seconds and returns its
// document as written and read back, and its kept table.
func reportsDoc(t *testing.T, tg dbtarget.Target) (*result.Document, salesTable) {
	t.Helper()
	w := &reports{dvdstore: newDVDStore()}
	r, err := w.Open(context.Background(), tg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	path := filepath.Join(t.TempDir(), "r.json")
	if err := result.Write(path, workloadtest.Run(t, tg, w, r, 2, 0)); err != nil {
		t.Fatal(err)
	}
	d, err := result.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	tab, ok, err := readSalesTable(d.Extra)
	if !ok || err != nil {
		t.Fatalf("extra %v: no %s table (%v)", d.Extra, salesKey, err)
	}
	return d, tab
}

// checkResult is dbrig check --result's comparison of d on tg.
func checkResult(t *testing.T, tg dbtarget.Target, d *result.Document) (bool, string) {
	t.Helper()
	var out bytes.Buffer
	ok, err := newDVDStore().CheckResult(context.Background(), tg, d.Extra, &out)
	if err != nil {
		t.Fatal(err)
	}
	return ok, out.String()
}

// testAnswers: a dvd-reports run keeps every category's totals, equal to
// the cent to the generator's, with checksums that a second run repeats;
// the check recomputes them on the database and passes, still passes
// after a dvd-store run has added orders, and fails, naming the category,
// once a loaded order line changes; a document of another build is the
// user's to fix.
func testAnswers(t *testing.T, url string) {
	ctx := context.Background()
	r, tg := openSmall(t, url, 1, 0)
	d, tab := reportsDoc(t, tg)
	sc, _ := parseScale("2MB")
	want := expectedSales(defaultSeed, sc, windowOf(latest(defaultSeed, sc)))
	if len(tab.Rows) < len(categories)/2 {
		t.Fatalf("%d categories kept: want most of the 16 in two seconds", len(tab.Rows))
	}
	if tab.Differed != 0 {
		t.Errorf("%d answers differed", tab.Differed)
	}
	for _, row := range tab.Rows {
		if row.cents() != toCents(want[row.Category]) || row.Answers == 0 {
			t.Errorf("category %d: kept %v (%d answers), generator %v", row.Category, row.cents(), row.Answers, toCents(want[row.Category]))
		}
	}
	// The checksum is the data's: the generator's totals give it too.
	gen := make(driver.Tally, len(reportTallies))
	for _, row := range tab.Rows {
		tallySales(gen, row.Category, want[row.Category])
	}
	if g := newSalesTable(windowOf(latest(defaultSeed, sc)), meta{scale: sc, seed: defaultSeed}, gen); g.Checksum != tab.Checksum {
		t.Errorf("checksum %s, the generator's totals give %s", tab.Checksum, g.Checksum)
	}
	if !strings.Contains(strings.Join(d.Lines, "\n"), "checksum "+tab.Checksum) {
		t.Errorf("summary lines %q do not show the table's checksum %s", d.Lines, tab.Checksum)
	}
	ok, out := checkResult(t, tg, d)
	if !ok || strings.Count(out, "PASS") != len(tab.Rows)+1 {
		t.Errorf("check of a fresh run: ok %v\n%s", ok, out)
	}

	workloadtest.Run(t, tg, newDVDStore(), r, 2, 0)
	_, again := reportsDoc(t, tg)
	sums := map[int]string{}
	for _, row := range tab.Rows {
		sums[row.Category] = row.Checksum
	}
	for _, row := range again.Rows {
		if s, ok := sums[row.Category]; ok && s != row.Checksum {
			t.Errorf("category %d: checksum %s after orders, %s before", row.Category, row.Checksum, s)
		}
	}
	if ok, out := checkResult(t, tg, d); !ok {
		t.Errorf("check after a dvd-store run: ok %v\n%s", ok, out)
	}

	// The last loaded order is in every window: its first line, one
	// more of its product, changes its category's totals.
	var o order
	genOrder(defaultSeed, sc, sc.Orders(), &o)
	v := make([]any, len(productColumns))
	product(defaultSeed, o.Products[0], sc.Products, v)
	cat := int(v[1].(int64))
	s, err := tg.Session(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Exec(ctx, "UPDATE ds_orderlines SET quantity = quantity + 1 WHERE orderid = $1 AND prod_id = $2", sc.Orders(), o.Products[0]); err != nil {
		t.Fatal(err)
	}
	ok, out = checkResult(t, tg, d)
	if fail := "FAIL  category_sales " + strconv.Itoa(cat) + " " + categories[cat-1] + ", month"; ok || !strings.Contains(out, fail) {
		t.Errorf("check after a changed line of category %d: ok %v, want a line %q\n%s", cat, ok, fail, out)
	}

	d.Extra[salesKey].(map[string]any)["data"].(map[string]any)["seed"] = "7"
	var ue *exitcode.UserError
	if _, err := newDVDStore().CheckResult(ctx, tg, d.Extra, &bytes.Buffer{}); !errors.As(err, &ue) || !strings.Contains(err.Error(), "seed 7") {
		t.Errorf("check of another build's result: %v, want a user error naming seed 7", err)
	}
	if _, err := newDVDStore().CheckResult(ctx, tg, nil, &bytes.Buffer{}); !errors.As(err, &ue) {
		t.Errorf("check of a result without the table: %v, want a user error", err)
	}
}

func TestAnswersSQLite(t *testing.T) { testAnswers(t, "sqlite:"+t.TempDir()+"/d.db") }

func TestAnswersPostgres(t *testing.T) { testAnswers(t, pgtest.NewDB(t)) }

// tallySales adds one answer of category cat to tally.
func tallySales(tally driver.Tally, cat int, sales [3]float64) {
	tally[salesSlot(cat, 0)]++
	for k, c := range toCents(sales) {
		tally[salesSlot(cat, k+1)] += c
	}
}

// TestSalesTableLines: the summary shows a row per category asked, the
// categories never asked, and answers that differed: a mean that is not
// a whole number of cents.
func TestSalesTableLines(t *testing.T) {
	tally := make(driver.Tally, len(reportTallies))
	tallySales(tally, 3, [3]float64{1234567.891, 2, 3})
	tallySales(tally, 3, [3]float64{1234567.891, 2, 3.01})
	tab := newSalesTable(windowOf(latest(1, small)), meta{scale: small, seed: 1}, tally)
	got := strings.Join(tab.lines(), "\n")
	for _, want := range []string{" 3 Children", "1,234,567.89", "15 categories never asked", "1 answers differed"} {
		if !strings.Contains(got, want) {
			t.Errorf("lines\n%s\ndo not show %q", got, want)
		}
	}
}

// TestReportsResummarize: a report run's figures, written to its
// document and read back, resummarized without a target give its metrics,
// lines and kept table: a merge of its parts keeps the answers.
func TestReportsResummarize(t *testing.T) {
	_, tg := openSmall(t, "sqlite:"+t.TempDir()+"/d.db", 1, 0)
	d, _ := reportsDoc(t, tg)
	workloadtest.Resummarizes(t, &reports{dvdstore: newDVDStore()}, d)
}

// TestReportsReseed: report runs reseeded to one seed draw the same
// categories, so that a run's parts draw the single run's.
func TestReportsReseed(t *testing.T) {
	_, tg := openSmall(t, "sqlite:"+t.TempDir()+"/d.db", 1, 0)
	open := func() (workload.Run, error) {
		return (&reports{dvdstore: newDVDStore()}).Open(context.Background(), tg)
	}
	workloadtest.Reseeds(t, open, []int{0, 1, 13}, func(r workload.Run, id int) []any {
		g := r.(*reportRun).rand(id)
		var d []any
		for range 100 {
			d = append(d, g.Uint64())
		}
		return d
	})
}

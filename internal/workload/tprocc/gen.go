package tprocc

import (
	"math/bits"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/workload"
)

// Cardinalities of the initial population (clause 4.3.3.1).
const (
	items            = 100000
	districtsPerWH   = 10
	customersPerDist = 3000
	ordersPerDist    = 3000
	firstNewOrder    = 2101 // orders from here on are undelivered
	orderLinesPerWH  = 300000
	newOrdersPerDist = ordersPerDist - firstNewOrder + 1
	fixedLastNames   = 1000 // c_id 1..1000 take lastName(c_id-1)
	originalPercent  = 10
	badCreditPercent = 10
	minOrderLines    = 5
	maxOrderLines    = 15
	initialNextO     = ordersPerDist + 1
	original         = "ORIGINAL"
	distInfoLength   = 24
)

// syllables are the ten last-name syllables of clause 4.3.2.3.
var syllables = [10]string{"BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"}

// lastNames holds every last name, so neither the loader nor a transaction
// builds one per use.
var lastNames = func() (t [1000]string) {
	for n := range t {
		t[n] = syllables[n/100] + syllables[n/10%10] + syllables[n%10]
	}
	return
}()

// lastName is the customer last name for n in [0, 999] (clause 4.3.2.3):
// its hundreds, tens and units digits each pick a syllable.
func lastName(n int) string { return lastNames[n] }

// Stream keys: every random draw of the load comes from a stream keyed by
// (seed, table, warehouse[, district]), so jobs can run in any order, on
// any loader, and still make the same rows.
const (
	keyItem = iota + 1
	keyWarehouse
	keyDistrict
	keyStock
	keyCustomer
	keyHistory
	keyOrders
	keyOrderLine
	keyOLCount
)

func streamKey(g genConfig, table, w, d int) uint64 {
	return workload.Mix(g.Seed, uint64(table)<<56|uint64(w)<<8|uint64(d))
}

func stream(g genConfig, table, w, d int) *workload.Rand {
	return workload.NewRand(g.Seed, streamKey(g, table, w, d))
}

// olCount is o_ol_cnt of order (w, d, o). It is a keyed hash rather than a
// stream draw so that orders and order_line, loaded apart, agree on it.
func olCount(districtKey uint64, o int) int {
	hi, _ := bits.Mul64(workload.Mix(districtKey, uint64(o)), maxOrderLines-minOrderLines+1)
	return minOrderLines + int(hi)
}

// Column lists, in the order the sources yield values.
var (
	itemColumns      = []string{"i_id", "i_im_id", "i_name", "i_price", "i_data"}
	warehouseColumns = []string{"w_id", "w_name", "w_street_1", "w_street_2", "w_city", "w_state", "w_zip",
		"w_tax", "w_ytd"}
	districtColumns = []string{"d_id", "d_w_id", "d_name", "d_street_1", "d_street_2", "d_city", "d_state",
		"d_zip", "d_tax", "d_ytd", "d_next_o_id"}
	// The four columns New-Order updates side by side, as the schema
	// stores them (see its tables block).
	stockColumns = []string{"s_i_id", "s_w_id", "s_quantity", "s_ytd", "s_order_cnt", "s_remote_cnt",
		"s_dist_01", "s_dist_02", "s_dist_03", "s_dist_04", "s_dist_05",
		"s_dist_06", "s_dist_07", "s_dist_08", "s_dist_09", "s_dist_10", "s_data"}
	customerColumns = []string{"c_id", "c_d_id", "c_w_id", "c_first", "c_middle", "c_last",
		"c_street_1", "c_street_2", "c_city", "c_state", "c_zip", "c_phone", "c_since", "c_credit",
		"c_credit_lim", "c_discount", "c_balance", "c_ytd_payment", "c_payment_cnt", "c_delivery_cnt", "c_data"}
	historyColumns = []string{"h_c_id", "h_c_d_id", "h_c_w_id", "h_d_id", "h_w_id", "h_date",
		"h_amount", "h_data"}
	ordersColumns = []string{"o_id", "o_d_id", "o_w_id", "o_c_id", "o_entry_d", "o_carrier_id",
		"o_ol_cnt", "o_all_local"}
	newOrderColumns  = []string{"no_o_id", "no_d_id", "no_w_id"}
	orderLineColumns = []string{"ol_o_id", "ol_d_id", "ol_w_id", "ol_number", "ol_i_id",
		"ol_supply_w_id", "ol_delivery_d", "ol_quantity", "ol_amount", "ol_dist_info"}
)

// loadJobs splits the load of warehouses warehouses into independent jobs,
// the biggest tables first so that a pool of loaders finishes together.
func loadJobs(g genConfig, warehouses int) []workload.LoadJob {
	tables := []struct {
		table   string
		columns []string
		rows    int64
		shared  bool // one job for the whole database, not one per warehouse
		rowFunc func(g genConfig, w int) func(dbtarget.FieldWriter) bool
		// count is a warehouse's rows where they vary; rows otherwise.
		count func(g genConfig, w int) int64
	}{
		{"stock", stockColumns, items, false, stockRows, nil},
		{"customer", customerColumns, districtsPerWH * customersPerDist, false, customerRows, nil},
		{"order_line", orderLineColumns, 0, false, orderLineRows, orderLines},
		{"item", itemColumns, items, true, itemRows, nil},
		{"orders", ordersColumns, districtsPerWH * ordersPerDist, false, ordersRows, nil},
		{"history", historyColumns, districtsPerWH * customersPerDist, false, historyRows, nil},
		{"new_order", newOrderColumns, districtsPerWH * newOrdersPerDist, false, newOrderRows, nil},
		{"district", districtColumns, districtsPerWH, false, districtRows, nil},
		{"warehouse", warehouseColumns, 1, false, warehouseRows, nil},
	}
	var jobs []workload.LoadJob
	for _, t := range tables {
		last := warehouses
		if t.shared {
			last = 1
		}
		for w := 1; w <= last; w++ {
			rows := t.rows
			if t.count != nil {
				rows = t.count(g, w)
			}
			jobs = append(jobs, workload.LoadJob{Table: t.table, Columns: t.columns, Rows: rows,
				Source: func() dbtarget.RowSource {
					return workload.FieldFunc(len(t.columns), t.rowFunc(g, w))
				}})
		}
	}
	return jobs
}

// Tables of every state (two letters) and zip code (n-string[4] + "11111"),
// so that addresses cost no allocation.
var states, zips = func() (st, zp string) {
	b := make([]byte, 0, 26*26*2)
	for i := range 26 * 26 {
		b = append(b, byte('A'+i/26), byte('A'+i%26))
	}
	z := make([]byte, 0, 10000*9)
	for i := range 10000 {
		z = append(z, byte('0'+i/1000), byte('0'+i/100%10), byte('0'+i/10%10), byte('0'+i%10))
		z = append(z, "11111"...)
	}
	return string(b), string(z)
}()

// row writes a row's values to a loader (FieldWriter, set for each row),
// drawing its random strings from r into a buffer of its own, so that
// they are written straight into the loader's encoding, never allocated.
type row struct {
	dbtarget.FieldWriter
	r   *workload.Rand
	buf []byte
}

// aString writes a random a-string of [lo, hi] characters.
func (f *row) aString(lo, hi int) {
	f.buf = f.r.AppendAString(f.buf[:0], lo, hi)
	f.TextBytes(f.buf)
}

// address writes street 1, street 2, city, state and zip.
func (f *row) address() {
	f.aString(10, 20)
	f.aString(10, 20)
	f.aString(10, 20)
	s := f.r.Int(0, 26*26-1) * 2
	f.Text(states[s : s+2])
	z := f.r.Int(0, 9999) * 9
	f.Text(zips[z : z+9])
}

// tax writes a tax rate in [0.0000, 0.2000].
func (f *row) tax() { f.Float(float64(f.r.Int(0, 2000)) / 10000) }

// itemData writes i_data or s_data: a-string [26, 50], with "ORIGINAL" in 10%.
func (f *row) itemData() {
	if f.r.Int(1, 100) <= originalPercent {
		f.buf = f.r.AppendAStringWith(f.buf[:0], 26, 50, original)
	} else {
		f.buf = f.r.AppendAString(f.buf[:0], 26, 50)
	}
	f.TextBytes(f.buf)
}

// rows is a table's rows, each written by fill while it reports one.
func rows(r *workload.Rand, fill func(f *row) bool) func(dbtarget.FieldWriter) bool {
	f := &row{r: r}
	return func(w dbtarget.FieldWriter) bool {
		f.FieldWriter = w
		return fill(f)
	}
}

// rowsUpTo is a table of n rows, numbered from 1, each written by fill.
func rowsUpTo(n int, r *workload.Rand, fill func(i int, f *row)) func(dbtarget.FieldWriter) bool {
	i := 0
	return rows(r, func(f *row) bool {
		if i == n {
			return false
		}
		i++
		fill(i, f)
		return true
	})
}

func itemRows(g genConfig, _ int) func(dbtarget.FieldWriter) bool {
	r := stream(g, keyItem, 0, 0)
	return rowsUpTo(items, r, func(i int, f *row) {
		f.Int(i)
		f.Int(r.Int(1, 10000))
		f.aString(14, 24)
		f.Float(r.Money(100, 10000))
		f.itemData()
	})
}

func warehouseRows(g genConfig, w int) func(dbtarget.FieldWriter) bool {
	r := stream(g, keyWarehouse, w, 0)
	return rowsUpTo(1, r, func(_ int, f *row) {
		f.Int(w)
		f.aString(6, 10)
		f.address()
		f.tax()
		f.Float(300000.00)
	})
}

func districtRows(g genConfig, w int) func(dbtarget.FieldWriter) bool {
	r := stream(g, keyDistrict, w, 0)
	return rowsUpTo(districtsPerWH, r, func(d int, f *row) {
		f.Int(d)
		f.Int(w)
		f.aString(6, 10)
		f.address()
		f.tax()
		f.Float(30000.00)
		f.Int(initialNextO)
	})
}

func stockRows(g genConfig, w int) func(dbtarget.FieldWriter) bool {
	r := stream(g, keyStock, w, 0)
	return rowsUpTo(items, r, func(i int, f *row) {
		f.Int(i)
		f.Int(w)
		f.Int(r.Int(10, 100))
		f.Int(0)
		f.Int(0)
		f.Int(0)
		for range 10 {
			f.aString(distInfoLength, distInfoLength)
		}
		f.itemData()
	})
}

// perDistrict walks (d, n) over districts 1..10 and n in 1..per, reseeding
// r at each district so each district's rows depend on nothing else.
type perDistrict struct {
	g     genConfig
	table int
	w     int
	per   int
	d, n  int
	r     *workload.Rand
}

func newPerDistrict(g genConfig, table, w, per int) *perDistrict {
	return &perDistrict{g: g, table: table, w: w, per: per, n: per, r: workload.NewRand(0, 0)}
}

// step advances to the next (d, n); newDistrict is true on the first row
// of a district.
func (p *perDistrict) step() (ok, newDistrict bool) {
	if p.n < p.per {
		p.n++
		return true, false
	}
	if p.d == districtsPerWH {
		return false, false
	}
	p.d++
	p.n = 1
	p.r.Seed(p.g.Seed, streamKey(p.g, p.table, p.w, p.d))
	return true, true
}

// keys writes n, d and w, the first three columns of most per-district tables.
func (p *perDistrict) keys(f *row) {
	f.Int(p.n)
	f.Int(p.d)
	f.Int(p.w)
}

func customerRows(g genConfig, w int) func(dbtarget.FieldWriter) bool {
	p := newPerDistrict(g, keyCustomer, w, customersPerDist)
	r := p.r
	return rows(r, func(f *row) bool {
		if ok, _ := p.step(); !ok {
			return false
		}
		c := p.n
		p.keys(f)
		f.aString(8, 16)
		f.Text("OE")
		if c <= fixedLastNames {
			f.Text(lastNames[c-1])
		} else {
			f.Text(lastNames[r.NURand(255, 0, 999, g.CLoad)])
		}
		f.address()
		f.buf = r.AppendNString(f.buf[:0], 16, 16)
		f.TextBytes(f.buf)
		f.Time(g.Now)
		if r.Int(1, 100) <= badCreditPercent {
			f.Text("BC")
		} else {
			f.Text("GC")
		}
		f.Float(50000.00)
		f.Float(float64(r.Int(0, 5000)) / 10000)
		f.Float(-10.00)
		f.Float(10.00)
		f.Int(1)
		f.Int(0)
		f.aString(300, 500)
		return true
	})
}

func historyRows(g genConfig, w int) func(dbtarget.FieldWriter) bool {
	p := newPerDistrict(g, keyHistory, w, customersPerDist)
	return rows(p.r, func(f *row) bool {
		if ok, _ := p.step(); !ok {
			return false
		}
		p.keys(f)
		f.Int(p.d)
		f.Int(p.w)
		f.Time(g.Now)
		f.Float(10.00)
		f.aString(12, 24)
		return true
	})
}

func ordersRows(g genConfig, w int) func(dbtarget.FieldWriter) bool {
	p := newPerDistrict(g, keyOrders, w, ordersPerDist)
	r := p.r
	var customers []int
	var olKey uint64
	return rows(r, func(f *row) bool {
		ok, first := p.step()
		if !ok {
			return false
		}
		if first {
			customers = r.Perm(customersPerDist)
			olKey = streamKey(g, keyOLCount, w, p.d)
		}
		o := p.n
		p.keys(f)
		f.Int(customers[o-1])
		f.Time(g.Now)
		if o < firstNewOrder {
			f.Int(r.Int(1, 10))
		} else {
			f.Null()
		}
		f.Int(olCount(olKey, o))
		f.Int(1)
		return true
	})
}

func newOrderRows(g genConfig, w int) func(dbtarget.FieldWriter) bool {
	p := newPerDistrict(g, 0, w, newOrdersPerDist)
	return rows(p.r, func(f *row) bool {
		if ok, _ := p.step(); !ok {
			return false
		}
		f.Int(firstNewOrder - 1 + p.n)
		f.Int(p.d)
		f.Int(p.w)
		return true
	})
}

// orderLines is warehouse w's order lines: the sum of its orders'
// o_ol_cnt, which averages orderLinesPerWH.
func orderLines(g genConfig, w int) int64 {
	var n int64
	for d := 1; d <= districtsPerWH; d++ {
		key := streamKey(g, keyOLCount, w, d)
		for o := 1; o <= ordersPerDist; o++ {
			n += int64(olCount(key, o))
		}
	}
	return n
}

// orderLineRows walks districts, their orders, and each order's lines.
// Nothing else follows o_ol_cnt, so it is tracked here rather than in
// perDistrict.
func orderLineRows(g genConfig, w int) func(dbtarget.FieldWriter) bool {
	p := newPerDistrict(g, keyOrderLine, w, ordersPerDist)
	r := p.r
	var olKey uint64
	o, line, lines := 0, 0, 0
	return rows(r, func(f *row) bool {
		if line == lines {
			ok, first := p.step()
			if !ok {
				return false
			}
			if first {
				olKey = streamKey(g, keyOLCount, w, p.d)
			}
			o, line, lines = p.n, 0, olCount(olKey, p.n)
		}
		line++
		f.Int(o)
		f.Int(p.d)
		f.Int(p.w)
		f.Int(line)
		f.Int(r.Int(1, items))
		f.Int(p.w)
		if o < firstNewOrder {
			f.Time(g.Now)
			f.Int(5)
			f.Float(0.00)
		} else {
			f.Null()
			f.Int(5)
			f.Float(r.Money(1, 999999))
		}
		f.aString(distInfoLength, distInfoLength)
		return true
	})
}

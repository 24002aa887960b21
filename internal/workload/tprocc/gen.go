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
	stockColumns = []string{"s_i_id", "s_w_id", "s_quantity",
		"s_dist_01", "s_dist_02", "s_dist_03", "s_dist_04", "s_dist_05",
		"s_dist_06", "s_dist_07", "s_dist_08", "s_dist_09", "s_dist_10",
		"s_ytd", "s_order_cnt", "s_remote_cnt", "s_data"}
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
		rowFunc func(g genConfig, w int) func([]any) bool
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
					return workload.RowFunc(len(t.columns), t.rowFunc(g, w))
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

// address fills street 1, street 2, city, state and zip from v[0].
func address(r *workload.Rand, v []any) {
	v[0] = r.AString(10, 20)
	v[1] = r.AString(10, 20)
	v[2] = r.AString(10, 20)
	s := r.Int(0, 26*26-1) * 2
	v[3] = states[s : s+2]
	z := r.Int(0, 9999) * 9
	v[4] = zips[z : z+9]
}

// tax is [0.0000, 0.2000].
func tax(r *workload.Rand) float64 { return float64(r.Int(0, 2000)) / 10000 }

// itemData is i_data and s_data: a-string [26, 50], with "ORIGINAL" in 10%.
func itemData(r *workload.Rand) string {
	if r.Int(1, 100) <= originalPercent {
		return r.AStringWith(26, 50, original)
	}
	return r.AString(26, 50)
}

// rowsUpTo is a table of n rows, numbered from 1, each written by fill.
func rowsUpTo(n int, fill func(i int, v []any)) func([]any) bool {
	i := 0
	return func(v []any) bool {
		if i == n {
			return false
		}
		i++
		fill(i, v)
		return true
	}
}

func itemRows(g genConfig, _ int) func([]any) bool {
	r := stream(g, keyItem, 0, 0)
	return rowsUpTo(items, func(i int, v []any) {
		v[0] = i
		v[1] = r.Int(1, 10000)
		v[2] = r.AString(14, 24)
		v[3] = r.Money(100, 10000)
		v[4] = itemData(r)
	})
}

func warehouseRows(g genConfig, w int) func([]any) bool {
	r := stream(g, keyWarehouse, w, 0)
	return rowsUpTo(1, func(_ int, v []any) {
		v[0] = w
		v[1] = r.AString(6, 10)
		address(r, v[2:7])
		v[7] = tax(r)
		v[8] = 300000.00
	})
}

func districtRows(g genConfig, w int) func([]any) bool {
	r := stream(g, keyDistrict, w, 0)
	wv := any(w)
	return rowsUpTo(districtsPerWH, func(d int, v []any) {
		v[0] = d
		v[1] = wv
		v[2] = r.AString(6, 10)
		address(r, v[3:8])
		v[8] = tax(r)
		v[9] = 30000.00
		v[10] = initialNextO
	})
}

func stockRows(g genConfig, w int) func([]any) bool {
	r := stream(g, keyStock, w, 0)
	wv := any(w)
	return rowsUpTo(items, func(i int, v []any) {
		v[0] = i
		v[1] = wv
		v[2] = r.Int(10, 100)
		for k := 3; k < 13; k++ {
			v[k] = r.AString(distInfoLength, distInfoLength)
		}
		v[13] = 0
		v[14] = 0
		v[15] = 0
		v[16] = itemData(r)
	})
}

// perDistrict walks (d, n) over districts 1..10 and n in 1..per, reseeding
// r at each district so each district's rows depend on nothing else.
type perDistrict struct {
	g      genConfig
	table  int
	w      int
	per    int
	d, n   int
	r      *workload.Rand
	wv, dv any
}

func newPerDistrict(g genConfig, table, w, per int) *perDistrict {
	return &perDistrict{g: g, table: table, w: w, per: per, n: per, r: workload.NewRand(0, 0), wv: any(w)}
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
	p.dv = any(p.d)
	p.r.Seed(p.g.Seed, streamKey(p.g, p.table, p.w, p.d))
	return true, true
}

func customerRows(g genConfig, w int) func([]any) bool {
	p := newPerDistrict(g, keyCustomer, w, customersPerDist)
	r := p.r
	now := any(g.Now)
	return func(v []any) bool {
		if ok, _ := p.step(); !ok {
			return false
		}
		c := p.n
		v[0] = c
		v[1] = p.dv
		v[2] = p.wv
		v[3] = r.AString(8, 16)
		v[4] = "OE"
		if c <= fixedLastNames {
			v[5] = lastNames[c-1]
		} else {
			v[5] = lastNames[r.NURand(255, 0, 999, g.CLoad)]
		}
		address(r, v[6:11])
		v[11] = r.NString(16, 16)
		v[12] = now
		if r.Int(1, 100) <= badCreditPercent {
			v[13] = "BC"
		} else {
			v[13] = "GC"
		}
		v[14] = 50000.00
		v[15] = float64(r.Int(0, 5000)) / 10000
		v[16] = -10.00
		v[17] = 10.00
		v[18] = 1
		v[19] = 0
		v[20] = r.AString(300, 500)
		return true
	}
}

func historyRows(g genConfig, w int) func([]any) bool {
	p := newPerDistrict(g, keyHistory, w, customersPerDist)
	r := p.r
	now := any(g.Now)
	return func(v []any) bool {
		if ok, _ := p.step(); !ok {
			return false
		}
		v[0] = p.n
		v[1] = p.dv
		v[2] = p.wv
		v[3] = p.dv
		v[4] = p.wv
		v[5] = now
		v[6] = 10.00
		v[7] = r.AString(12, 24)
		return true
	}
}

func ordersRows(g genConfig, w int) func([]any) bool {
	p := newPerDistrict(g, keyOrders, w, ordersPerDist)
	r := p.r
	now := any(g.Now)
	var customers []int
	var olKey uint64
	return func(v []any) bool {
		ok, first := p.step()
		if !ok {
			return false
		}
		if first {
			customers = r.Perm(customersPerDist)
			olKey = streamKey(g, keyOLCount, w, p.d)
		}
		o := p.n
		v[0] = o
		v[1] = p.dv
		v[2] = p.wv
		v[3] = customers[o-1]
		v[4] = now
		if o < firstNewOrder {
			v[5] = r.Int(1, 10)
		} else {
			v[5] = nil
		}
		v[6] = olCount(olKey, o)
		v[7] = 1
		return true
	}
}

func newOrderRows(g genConfig, w int) func([]any) bool {
	p := newPerDistrict(g, 0, w, newOrdersPerDist)
	return func(v []any) bool {
		if ok, _ := p.step(); !ok {
			return false
		}
		v[0] = firstNewOrder - 1 + p.n
		v[1] = p.dv
		v[2] = p.wv
		return true
	}
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
func orderLineRows(g genConfig, w int) func([]any) bool {
	p := newPerDistrict(g, keyOrderLine, w, ordersPerDist)
	r := p.r
	now := any(g.Now)
	var olKey uint64
	var ov any // o_id, boxed once per order
	o, line, lines := 0, 0, 0
	return func(v []any) bool {
		if line == lines {
			ok, first := p.step()
			if !ok {
				return false
			}
			if first {
				olKey = streamKey(g, keyOLCount, w, p.d)
			}
			o, line, lines = p.n, 0, olCount(olKey, p.n)
			ov = any(o)
		}
		line++
		v[0] = ov
		v[1] = p.dv
		v[2] = p.wv
		v[3] = line
		v[4] = r.Int(1, items)
		v[5] = p.wv
		if o < firstNewOrder {
			v[6] = now
			v[8] = 0.00
		} else {
			v[6] = nil
			v[8] = r.Money(1, 999999)
		}
		v[7] = 5
		v[9] = r.AString(distInfoLength, distInfoLength)
		return true
	}
}

package tprocc

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/workload"
)

var testGen = genConfig{Seed: 42, CLoad: 157, Now: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)}

func TestLastName(t *testing.T) {
	for _, c := range []struct {
		n    int
		want string
	}{
		{0, "BARBARBAR"},
		{371, "PRICALLYOUGHT"},
		{999, "EINGEINGEING"},
		{110, "OUGHTOUGHTBAR"},
		{528, "ESEABLEATION"},
		{64, "BARANTIPRES"},
	} {
		if got := lastName(c.n); got != c.want {
			t.Errorf("lastName(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}

// drain runs a fresh source of job to the end, calling row with each row.
func drain(t testing.TB, job workload.LoadJob, row func(v []any)) int {
	t.Helper()
	src := job.Source()
	n := 0
	for src.Next() {
		v, err := src.Values()
		if err != nil {
			t.Fatalf("%s: %v", job.Table, err)
		}
		if len(v) != len(job.Columns) {
			t.Fatalf("%s: row has %d values for %d columns", job.Table, len(v), len(job.Columns))
		}
		row(v)
		n++
	}
	if err := src.Err(); err != nil {
		t.Fatalf("%s: %v", job.Table, err)
	}
	return n
}

// jobFor finds the job loading table for warehouse w (its first column
// that is a warehouse id holds w).
func jobFor(t testing.TB, jobs []workload.LoadJob, table string, w int) workload.LoadJob {
	t.Helper()
	for _, j := range jobs {
		if j.Table != table {
			continue
		}
		if table == "item" {
			return j
		}
		found := false
		drainOne(j, func(v []any) { found = v[slices.IndexFunc(j.Columns, isWarehouseID)] == w })
		if found {
			return j
		}
	}
	t.Fatalf("no %s job for warehouse %d", table, w)
	return workload.LoadJob{}
}

func isWarehouseID(c string) bool { return strings.HasSuffix(c, "w_id") }

func drainOne(j workload.LoadJob, f func(v []any)) {
	src := j.Source()
	if src.Next() {
		v, _ := src.Values()
		f(v)
	}
}

func TestRowCounts(t *testing.T) {
	for _, warehouses := range []int{1, 2} {
		t.Run(strconv.Itoa(warehouses), func(t *testing.T) {
			jobs := loadJobs(testGen, warehouses)
			if len(jobs) != 1+8*warehouses {
				t.Fatalf("%d jobs, want %d", len(jobs), 1+8*warehouses)
			}
			got := map[string]int{}
			for _, j := range jobs {
				n := drain(t, j, func([]any) {})
				if int64(n) != j.Rows {
					t.Errorf("%s: %d rows, job says %d", j.Table, n, j.Rows)
				}
				got[j.Table] += n
			}
			for table, per := range map[string]int{"item": 0, "warehouse": 1, "district": 10,
				"stock": 100000, "customer": 30000, "history": 30000, "orders": 30000, "new_order": 9000} {
				want := per * warehouses
				if table == "item" {
					want = 100000
				}
				if got[table] != want {
					t.Errorf("%s: %d rows, want %d", table, got[table], want)
				}
			}
			// o_ol_cnt is uniform in [5, 15]: 10 per order on average.
			if ol, want := got["order_line"], 300000*warehouses; math.Abs(float64(ol-want)) > 0.01*float64(want) {
				t.Errorf("order_line: %d rows, want about %d", ol, want)
			}
		})
	}
}

// schemaColumns reads the column names and types of every table from the
// PostgreSQL schema.
func schemaColumns(t *testing.T) map[string][][2]string {
	f, err := workload.ReadSQL(sqlFiles, "sql/postgres/schema.sql")
	if err != nil {
		t.Fatal(err)
	}
	tables := map[string][][2]string{}
	create := regexp.MustCompile(`(?s)CREATE TABLE (\w+) \((.*?)\);`)
	column := regexp.MustCompile(`(\w+) ((?:var)?char\(\d+\)|numeric\(\d+,\d+\)|(?:int|bigint|timestamptz|timestamp)\b)`)
	for _, m := range create.FindAllStringSubmatch(f.Get("tables"), -1) {
		for _, c := range column.FindAllStringSubmatch(m[2], -1) {
			tables[m[1]] = append(tables[m[1]], [2]string{c[1], c[2]})
		}
	}
	if len(tables) == 0 {
		t.Fatal("no tables found in the schema")
	}
	return tables
}

// TestValuesMatchSchema checks every row of one warehouse, and the items,
// against the schema: column names and order, Go types, string lengths,
// numeric precision and scale, and where NULL may appear.
func TestValuesMatchSchema(t *testing.T) {
	schema := schemaColumns(t)
	nullable := map[string]bool{"o_carrier_id": true, "ol_delivery_d": true}
	typeRe := regexp.MustCompile(`^(\w+)(?:\((\d+)(?:,(\d+))?\))?$`)
	for _, j := range loadJobs(testGen, 1) {
		t.Run(j.Table, func(t *testing.T) {
			cols := schema[j.Table]
			if len(cols) != len(j.Columns) {
				t.Fatalf("job has %d columns, schema %d", len(j.Columns), len(cols))
			}
			for i, c := range cols {
				if j.Columns[i] != c[0] {
					t.Fatalf("column %d is %q, schema says %q", i, j.Columns[i], c[0])
				}
			}
			bad := 0
			fail := func(format string, args ...any) {
				if bad++; bad <= 5 {
					t.Errorf(format, args...)
				}
			}
			type colType struct {
				name, kind  string
				size, scale int
			}
			types := make([]colType, len(cols))
			for i, c := range cols {
				m := typeRe.FindStringSubmatch(c[1])
				types[i] = colType{c[0], m[1], atoi(m[2]), atoi(m[3])}
			}
			drain(t, j, func(v []any) {
				for i, c := range cols {
					name, kind, size, scale := types[i].name, types[i].kind, types[i].size, types[i].scale
					if v[i] == nil {
						if !nullable[name] {
							fail("%s is NULL", name)
						}
						continue
					}
					switch kind {
					case "int", "bigint":
						if _, ok := v[i].(int); !ok {
							fail("%s = %#v, want int", name, v[i])
						}
					case "numeric":
						f, ok := v[i].(float64)
						scaled := f * math.Pow10(scale)
						if !ok || math.Abs(scaled-math.Round(scaled)) > 1e-6 || math.Abs(f) >= math.Pow10(size-scale) {
							fail("%s = %#v, want float64 fitting numeric(%d,%d)", name, v[i], size, scale)
						}
					case "varchar", "char":
						s, ok := v[i].(string)
						if !ok || len(s) > size || kind == "char" && len(s) != size {
							fail("%s = %#v, want %s", name, v[i], c[1])
						}
					case "timestamp":
						if tm, ok := v[i].(time.Time); !ok || !tm.Equal(testGen.Now) {
							fail("%s = %#v, want the population time", name, v[i])
						}
					default:
						t.Fatalf("%s: type %s not handled by the test", name, c[1])
					}
				}
			})
		})
	}
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// TestPrimaryKeyOrder checks that every table comes out in primary-key
// order, with no duplicate keys.
func TestPrimaryKeyOrder(t *testing.T) {
	keys := map[string][]string{
		"item":       {"i_id"},
		"warehouse":  {"w_id"},
		"district":   {"d_w_id", "d_id"},
		"stock":      {"s_w_id", "s_i_id"},
		"customer":   {"c_w_id", "c_d_id", "c_id"},
		"orders":     {"o_w_id", "o_d_id", "o_id"},
		"new_order":  {"no_w_id", "no_d_id", "no_o_id"},
		"order_line": {"ol_w_id", "ol_d_id", "ol_o_id", "ol_number"},
		"history":    {"h_w_id", "h_d_id", "h_c_id"}, // no key, but made in this order
	}
	for _, j := range loadJobs(testGen, 2) {
		var idx []int
		for _, k := range keys[j.Table] {
			idx = append(idx, slices.Index(j.Columns, k))
		}
		var prev []int
		drain(t, j, func(v []any) {
			key := make([]int, len(idx))
			for i, c := range idx {
				key[i] = v[c].(int)
			}
			if prev != nil && slices.Compare(prev, key) >= 0 {
				t.Fatalf("%s: key %v after %v", j.Table, key, prev)
			}
			prev = key
		})
	}
}

// rowsHash hashes a job's rows, in order, the same on every platform and
// run (FNV-1a of each value's type, then its bits or length and bytes).
func rowsHash(t testing.TB, j workload.LoadJob) uint64 {
	h := fnv.New64a()
	var b [8]byte
	num := func(u uint64) {
		binary.LittleEndian.PutUint64(b[:], u)
		h.Write(b[:])
	}
	drain(t, j, func(v []any) {
		for _, x := range v {
			switch x := x.(type) {
			case nil:
				h.Write([]byte{0})
			case int:
				h.Write([]byte{1})
				num(uint64(x))
			case float64:
				h.Write([]byte{2})
				num(math.Float64bits(x))
			case string:
				h.Write([]byte{3})
				num(uint64(len(x)))
				h.Write([]byte(x))
			case time.Time:
				h.Write([]byte{4})
				num(uint64(x.UnixNano()))
			default:
				t.Fatalf("%s: value of type %T", j.Table, x)
			}
		}
	})
	return h.Sum64()
}

func TestDeterministic(t *testing.T) {
	jobs := loadJobs(testGen, 2)
	again := loadJobs(testGen, 2)
	slices.Reverse(again) // the order jobs run in must not matter
	seen := map[uint64]string{}
	for i, j := range jobs {
		a := rowsHash(t, j)
		if b := rowsHash(t, j); a != b {
			t.Errorf("%s job %d: two sources gave different rows", j.Table, i)
		}
		if b := rowsHash(t, again[len(jobs)-1-i]); a != b {
			t.Errorf("%s job %d: a second loadJobs gave different rows", j.Table, i)
		}
		// new_order has no random column, so its warehouses differ in w only.
		if other, dup := seen[a]; dup {
			t.Errorf("%s job %d: same rows as %s", j.Table, i, other)
		}
		seen[a] = j.Table
	}
	other := testGen
	other.Seed++
	for _, table := range []string{"item", "stock", "customer", "order_line"} {
		if rowsHash(t, jobFor(t, jobs, table, 1)) == rowsHash(t, jobFor(t, loadJobs(other, 1), table, 1)) {
			t.Errorf("%s: another seed gave the same rows", table)
		}
	}
}

// share returns the fraction of rows for which is holds.
func share(t *testing.T, j workload.LoadJob, is func(v []any) bool) float64 {
	hits := 0
	n := drain(t, j, func(v []any) {
		if is(v) {
			hits++
		}
	})
	return float64(hits) / float64(n)
}

func TestProportions(t *testing.T) {
	jobs := loadJobs(testGen, 1)
	hasOriginal := func(col int) func([]any) bool {
		return func(v []any) bool { return strings.Contains(v[col].(string), original) }
	}
	for _, c := range []struct {
		name, table string
		is          func([]any) bool
		want, tol   float64
	}{
		{"i_data ORIGINAL", "item", hasOriginal(4), 0.10, 0.005},
		{"s_data ORIGINAL", "stock", hasOriginal(16), 0.10, 0.005},
		{"c_credit BC", "customer", func(v []any) bool { return v[13] == "BC" }, 0.10, 0.01},
		{"o_carrier_id NULL", "orders", func(v []any) bool { return v[5] == nil }, 0.30, 0},
		{"ol_delivery_d NULL", "order_line", func(v []any) bool { return v[6] == nil }, 0.30, 0.01},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := share(t, jobFor(t, jobs, c.table, 1), c.is); math.Abs(got-c.want) > c.tol {
				t.Errorf("%.4f of rows, want %.2f±%.3f", got, c.want, c.tol)
			}
		})
	}
}

func TestOrdersAndOrderLines(t *testing.T) {
	jobs := loadJobs(testGen, 2)
	for _, w := range []int{1, 2} {
		type order struct{ d, o int }
		olCnt := map[order]int{}
		customers := map[int][]int{}
		drain(t, jobFor(t, jobs, "orders", w), func(v []any) {
			o, d := v[0].(int), v[1].(int)
			olCnt[order{d, o}] = v[6].(int)
			customers[d] = append(customers[d], v[3].(int))
			if cnt := v[6].(int); cnt < 5 || cnt > 15 {
				t.Fatalf("o_ol_cnt %d", cnt)
			}
			if carrier, ok := v[5].(int); (o < 2101) != ok || ok && (carrier < 1 || carrier > 10) {
				t.Fatalf("order %d has o_carrier_id %v", o, v[5])
			}
		})
		for d, cs := range customers {
			slices.Sort(cs)
			for i, c := range cs {
				if c != i+1 {
					t.Fatalf("district %d: o_c_id is not a permutation of 1..3000", d)
				}
			}
		}
		lines := map[order]int{}
		perDistrict := map[int]int{}
		drain(t, jobFor(t, jobs, "order_line", w), func(v []any) {
			k := order{v[1].(int), v[0].(int)}
			lines[k]++
			perDistrict[k.d]++
			if v[3] != lines[k] {
				t.Fatalf("order %v: ol_number %v, want %d", k, v[3], lines[k])
			}
			if v[5] != w || v[7] != 5 {
				t.Fatalf("ol_supply_w_id %v, ol_quantity %v", v[5], v[7])
			}
			if i := v[4].(int); i < 1 || i > 100000 {
				t.Fatalf("ol_i_id %d", i)
			}
			amount := v[8].(float64)
			if delivered := k.o < 2101; delivered != (v[6] != nil) || delivered != (amount == 0) ||
				amount < 0 || amount > 9999.99 {
				t.Fatalf("order %d: ol_delivery_d %v, ol_amount %v", k.o, v[6], amount)
			}
		})
		sum := map[int]int{}
		for k, n := range olCnt {
			sum[k.d] += n
			if lines[k] != n {
				t.Fatalf("w %d order %v: %d lines, o_ol_cnt %d", w, k, lines[k], n)
			}
		}
		if len(lines) != len(olCnt) {
			t.Errorf("order_line has %d orders, orders %d", len(lines), len(olCnt))
		}
		for d := 1; d <= 10; d++ {
			if perDistrict[d] != sum[d] {
				t.Errorf("district %d: %d order lines, sum of o_ol_cnt %d", d, perDistrict[d], sum[d])
			}
		}
	}
}

func TestNewOrders(t *testing.T) {
	jobs := loadJobs(testGen, 2)
	for _, w := range []int{1, 2} {
		perDistrict := map[int][]int{}
		drain(t, jobFor(t, jobs, "new_order", w), func(v []any) {
			if v[2] != w {
				t.Fatalf("no_w_id %v in warehouse %d", v[2], w)
			}
			perDistrict[v[1].(int)] = append(perDistrict[v[1].(int)], v[0].(int))
		})
		if len(perDistrict) != 10 {
			t.Fatalf("%d districts", len(perDistrict))
		}
		for d, os := range perDistrict {
			if len(os) != 900 || os[0] != 2101 || os[899] != 3000 {
				t.Errorf("district %d: %d new orders, %d..%d", d, len(os), os[0], os[len(os)-1])
			}
		}
	}
}

func TestCustomers(t *testing.T) {
	names := map[string]bool{}
	for n := range 1000 {
		names[lastName(n)] = true
	}
	hot := map[string]int{}
	drain(t, jobFor(t, loadJobs(testGen, 1), "customer", 1), func(v []any) {
		c, last := v[0].(int), v[5].(string)
		if c <= 1000 {
			if last != lastName(c-1) {
				t.Fatalf("c_id %d: c_last %q, want %q", c, last, lastName(c-1))
			}
			return
		}
		if !names[last] {
			t.Fatalf("c_id %d: c_last %q is no last name", c, last)
		}
		hot[last]++
		if v[4] != "OE" || v[16] != -10.0 || v[17] != 10.0 || v[18] != 1 || v[19] != 0 || v[14] != 50000.0 {
			t.Fatalf("constant columns wrong: %v", v)
		}
		if first := v[3].(string); len(first) < 8 || len(first) > 16 {
			t.Fatalf("c_first %q", first)
		}
		if data := v[20].(string); len(data) < 300 || len(data) > 500 {
			t.Fatalf("c_data of length %d", len(data))
		}
		if zip := v[10].(string); !strings.HasSuffix(zip, "11111") || strings.Trim(zip[:4], "0123456789") != "" {
			t.Fatalf("c_zip %q", zip)
		}
	})
	// NURand(255, 0, 999) makes some names far more common than 1 in 1000.
	most := 0
	for _, n := range hot {
		most = max(most, n)
	}
	if uniform := 20000 / 1000; most < 3*uniform {
		t.Errorf("commonest generated last name used %d times; NURand should give far above %d", most, uniform)
	}
}

func TestDistrictsAndWarehouses(t *testing.T) {
	jobs := loadJobs(testGen, 2)
	for _, w := range []int{1, 2} {
		drain(t, jobFor(t, jobs, "warehouse", w), func(v []any) {
			if v[0] != w || v[8] != 300000.0 {
				t.Errorf("warehouse row %v", v)
			}
		})
		d := 0
		drain(t, jobFor(t, jobs, "district", w), func(v []any) {
			d++
			if v[0] != d || v[1] != w || v[9] != 30000.0 || v[10] != 3001 {
				t.Errorf("district row %v", v)
			}
			if tax := v[8].(float64); tax < 0 || tax > 0.2 {
				t.Errorf("d_tax %v", tax)
			}
		})
	}
}

func TestHistory(t *testing.T) {
	drain(t, jobFor(t, loadJobs(testGen, 2), "history", 2), func(v []any) {
		if v[1] != v[3] || v[2] != 2 || v[4] != 2 || v[6] != 10.0 {
			t.Fatalf("history row %v", v)
		}
		if data := v[7].(string); len(data) < 12 || len(data) > 24 {
			t.Fatalf("h_data %q", data)
		}
	})
}

// BenchmarkGenerate makes all the rows of one warehouse plus the items, as
// a one-warehouse build would, and reports rows per second.
func BenchmarkGenerate(b *testing.B) {
	jobs := loadJobs(testGen, 1)
	b.Run("all", func(b *testing.B) {
		rows := 0
		for b.Loop() {
			for _, j := range jobs {
				rows += drain(b, j, func([]any) {})
			}
		}
		b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
		b.ReportMetric(float64(rows)/float64(b.N), "rows/op")
	})
	for _, j := range jobs {
		b.Run(j.Table, func(b *testing.B) {
			rows := 0
			for b.Loop() {
				rows += drain(b, j, func([]any) {})
			}
			b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// TestRowsUnchanged holds the rows of a one-warehouse load to their hashes
// as the generators of 08d532a made them, value by value: a faster
// generator must make the same data. A deliberate change of the data
// updates these. Stock's hash is of its columns in the order New-Order's
// four updated ones have stood in since issue 39: the same values as
// 08d532a's, whose order hashed to 0xd14c51fe381998f7.
func TestRowsUnchanged(t *testing.T) {
	want := map[string]uint64{
		"item": 0x647851b91731fa35, "warehouse": 0xd65dd726e4fb920e, "district": 0xcbf1d9bf0a8e1884,
		"stock": 0xfbd72435db4f9469, "customer": 0x0efe47be497c1b21, "history": 0xaafccbeb535a243b,
		"orders": 0x86f271e4d62fcb03, "new_order": 0xde02f1336a8a7771, "order_line": 0x7bb62a52e2259636,
	}
	for _, j := range loadJobs(testGen, 1) {
		if got := rowsHash(t, j); got != want[j.Table] {
			t.Errorf("%s: rows hash %#x, want %#x", j.Table, got, want[j.Table])
		}
	}
}

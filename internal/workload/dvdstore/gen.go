package dvdstore

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/human"
	"github.com/dbrig/dbrig/internal/workload"
)

// scale is a build's size: its customers, products and orders a month,
// for twelve months.
type scale struct {
	Customers, Products, OrdersPerMonth int64
}

// The standard sizes: S is about 10 MB of data, M 1 GB, L 100 GB.
var (
	small  = scale{20_000, 10_000, 1_000}
	medium = scale{2_000_000, 100_000, 100_000}
	large  = scale{200_000_000, 1_000_000, 10_000_000}
)

func (s scale) times(f float64) scale {
	r := func(n int64) int64 { return max(int64(math.Round(float64(n)*f)), 1) }
	return scale{r(s.Customers), r(s.Products), r(s.OrdersPerMonth)}
}

// Orders is how many orders a build loads: twelve months' worth.
func (s scale) Orders() int64 { return 12 * s.OrdersPerMonth }

// parseScale reads --size: S, M or L, or a size that scales them
// linearly as the original's driver does: <N>MB from S (10 MB), 1GB is M,
// any other <N>GB from L (100 GB).
func parseScale(size string) (scale, error) {
	switch strings.ToUpper(strings.TrimSpace(size)) {
	case "S":
		return small, nil
	case "M":
		return medium, nil
	case "L":
		return large, nil
	}
	bytes, err := human.ParseSize(size)
	if err != nil || bytes < 1<<20 {
		return scale{}, exitcode.Userf("--size %q: use S, M, L or a size of 1MB or more such as 50MB or 2GB", size)
	}
	mb := float64(bytes) / (1 << 20)
	switch {
	case bytes == 1<<30:
		return medium, nil
	case bytes < 1<<30:
		return small.times(mb / 10), nil
	}
	s := large.times(mb / 1024 / 100)
	if most := max(s.Customers, s.Products, s.Orders()); most > math.MaxInt32 {
		return scale{}, exitcode.Userf("--size %q: %s customers, %s products and %s orders, more than the schema's ids, 32-bit integers, can number (%s)",
			size, human.Thousands(float64(s.Customers)), human.Thousands(float64(s.Products)), human.Thousands(float64(s.Orders())), human.Thousands(math.MaxInt32))
	}
	return s, nil
}

// dataYear is the calendar year every loaded order falls in.
const dataYear = 2013

// Stream keys: every draw of the load comes from a stream keyed by (seed,
// table, row), so any range of rows loads on its own.
const (
	keyCustomer = iota + 1
	keyProduct
	keyOrder
	keyInventory
)

// hotEvery makes every 10,000th product a hot seller: ten times the stock,
// ten times as likely in a cart.
const hotEvery = 10_000

// The 16 categories, ids 1 to 16.
var categories = []string{"Action", "Animation", "Children", "Classics", "Comedy", "Documentary", "Drama",
	"Family", "Foreign", "Games", "Horror", "Music", "New", "Sci-Fi", "Sports", "Travel"}

// Countries of the rest-of-world customers, and the US states (with DC).
var (
	countries = []string{"Australia", "Canada", "Chile", "China", "France", "Germany", "Japan", "Russia", "South Africa", "UK"}
	usStates  = strings.Fields("AK AL AR AZ CA CO CT DC DE FL GA HI IA ID IL IN KS KY LA MA MD ME MI MN MO MS MT NC ND NE NH NJ NM NV NY OH OK OR PA RI SC SD TN TX UT VA VT WA WI WV WY")
)

// words are the 1,000 title words and names the 200 actors' first and
// last names, made here from syllables: two-word titles are unique up to
// 1,000,000 products, and 200 x 200 names give 40,000 actors.
var (
	syllables  = strings.Fields("BA KE LO MI NU RA SE TI VO ZA")
	firstSyl   = strings.Fields("AL BEN CAR DAN ED FRAN GRE HAL IVA JON")
	secondSyl  = strings.Fields("A AN ER IE INA O ON US Y ETH IS EL ARA ICK OLD ORA UEL ITA AM EN")
	lastSyl    = strings.Fields("BRO CAL DUN FER GAR HOL KIN MOR PET WAL")
	lastSuffix = strings.Fields("TON SON MAN LEY WOOD FORD RICK BERG STEIN FIELD DALE HART LOCK MORE NELL RIDGE SHAW THORN VILLE WORTH")
	words      = func() (w [1000]string) {
		for i := range w {
			w[i] = syllables[i/100] + syllables[i/10%10] + syllables[i%10]
		}
		return
	}()
	firstNames = func() (n [200]string) {
		for i := range n {
			n[i] = firstSyl[i/20] + secondSyl[i%20]
		}
		return
	}()
	lastNames = func() (n [200]string) {
		for i := range n {
			n[i] = lastSyl[i/20] + lastSuffix[i%20]
		}
		return
	}()
)

// title is product i's title (i from 0).
func title(i int64) string { return words[i/1000%1000] + " " + words[i%1000] }

// actor is an actor's whole name.
func actor(r *workload.Rand) string {
	return firstNames[r.Int(0, 199)] + " " + lastNames[r.Int(0, 199)]
}

// caps is n random capital letters.
func caps(r *workload.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('A' + r.Int(0, 25))
	}
	return string(b)
}

// digits is n random digits.
func digits(r *workload.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('0' + r.Int(0, 9))
	}
	return string(b)
}

// customer fills v with customer id's row: the first half of the ids are
// US customers, the rest from the world.
func customer(seed uint64, id, customers int64, v []any) {
	r := workload.NewRand(workload.Mix(seed, keyCustomer), uint64(id))
	us := id <= customers/2
	state, zip, country, region := "", "", countries[r.Int(0, len(countries)-1)], int64(2)
	if us {
		state, zip, country, region = usStates[r.Int(0, len(usStates)-1)], strconv.Itoa(r.Int(10000, 99999)), "US", 1
	}
	first, last, city, phone := caps(r, 6), caps(r, 10), caps(r, 7), digits(r, 10)
	gender := "M"
	if r.Int(0, 1) == 1 {
		gender = "F"
	}
	v[0], v[1], v[2], v[3], v[4] = id, first, last, phone+" Main Street", ""
	v[5], v[6], v[7], v[8], v[9] = city, state, zip, country, region
	v[10], v[11], v[12], v[13] = strings.ToLower(last)+"@example.com", phone, int64(r.Int(1, 5)), digits(r, 16)
	v[14] = fmt.Sprintf("%d/%02d", r.Int(2015, 2019), r.Int(1, 12))
	v[15], v[16], v[17], v[18], v[19] = "user"+strconv.FormatInt(id, 10), "password", int64(r.Int(18, 90)), int64(20000*r.Int(1, 5)), gender
}

var customerColumns = []string{"customerid", "firstname", "lastname", "address1", "address2", "city", "state", "zip",
	"country", "region", "email", "phone", "creditcardtype", "creditcard", "creditcardexpiration", "username",
	"password", "age", "income", "gender"}

// product fills v with product id's row.
func product(seed uint64, id, products int64, v []any) {
	r := workload.NewRand(workload.Mix(seed, keyProduct), uint64(id))
	special := int64(0)
	odds := 100
	if products > 100_000 {
		odds = 10_000
	}
	if r.Int(1, odds) == 1 {
		special = 1
	}
	v[0], v[1], v[2], v[3] = id, int64(r.Int(1, 16)), title(id-1), actor(r)
	v[4], v[5], v[6] = float64(r.Int(9, 29))+0.99, special, int64(r.Int(1, int(products)))
}

var productColumns = []string{"prod_id", "category", "title", "actor", "price", "special", "common_prod_id"}

// order is one loaded order and its lines.
type order struct {
	ID, Customer       int64
	Date               time.Time
	Net, Tax, Total    float64
	Products, Quantity [9]int64
	Lines              int
}

// genOrder makes order id of a build: in month (id-1)/OrdersPerMonth of
// the data's year, on a uniform day, for a uniform customer, of 1 to 9
// lines of uniform products, 1 to 3 of each. Its amounts are drawn, as
// the original's are, not summed from the lines.
func genOrder(seed uint64, s scale, id int64, o *order) {
	r := workload.NewRand(workload.Mix(seed, keyOrder), uint64(id))
	month := time.Month((id-1)/s.OrdersPerMonth%12 + 1)
	days := time.Date(dataYear, month+1, 0, 0, 0, 0, 0, time.UTC).Day()
	o.ID, o.Customer = id, int64(r.Int(1, int(s.Customers)))
	o.Date = time.Date(dataYear, month, r.Int(1, days), 0, 0, 0, 0, time.UTC)
	o.Net = float64(r.Int(1, 40000)) / 100
	o.Tax = math.Round(o.Net*8.25) / 100
	o.Total = math.Round((o.Net+o.Tax)*100) / 100
	o.Lines = r.Int(1, 9)
	for i := range o.Lines {
		o.Products[i], o.Quantity[i] = int64(r.Int(1, int(s.Products))), int64(r.Int(1, 3))
	}
}

var (
	orderColumns    = []string{"orderid", "orderdate", "customerid", "netamount", "tax", "totalamount"}
	lineColumns     = []string{"orderlineid", "orderid", "prod_id", "quantity", "orderdate"}
	histColumns     = []string{"customerid", "orderid", "prod_id"}
	inventoryColums = []string{"prod_id", "quan_in_stock", "sales"}
)

// sales are the quantities the build's orders hold of each product, by
// prod_id (index 0 unused): the inventory's sales must add up to them.
func sales(seed uint64, s scale) []int64 {
	out := make([]int64, s.Products+1)
	var o order
	for id := int64(1); id <= s.Orders(); id++ {
		genOrder(seed, s, id, &o)
		for i := range o.Lines {
			out[o.Products[i]] += o.Quantity[i]
		}
	}
	return out
}

// stock is a product's stock at build: 0 to 500, ten times that for a
// hot seller.
func stock(seed uint64, id int64) int64 {
	n := int64(workload.NewRand(workload.Mix(seed, keyInventory), uint64(id)).Int(0, 500))
	if id%hotEvery == 0 {
		n *= 10
	}
	return n
}

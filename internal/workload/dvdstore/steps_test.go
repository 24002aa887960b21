package dvdstore

import (
	"context"
	"strconv"
	"testing"

	"github.com/dbrig/dbrig/internal/server/postgres/pgtest"
	"github.com/dbrig/dbrig/internal/workload"
)

// testSteps checks, in each mode, what the runs cannot see: a search by
// a product's whole actor or title finds that product (the searches are
// full-text ones on PostgreSQL and MariaDB), and a new customer under a
// name already taken gets no id, where the first under it got one.
func testSteps(t *testing.T, url string, modes ...string) {
	ctx := context.Background()
	r, tg := openSmall(t, url, 1, 0)
	sc, _ := parseScale("2MB")
	v := make([]any, len(productColumns))
	const prod = 42
	product(defaultSeed, prod, sc.Products, v)
	for i, mode := range modes {
		cfg := r.cfg
		cfg.mode = mode
		s, err := openSession(ctx, tg, &cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, by := range []struct{ step, search string }{{"browse_actor", v[3].(string)}, {"browse_title", v[2].(string)}} {
			if !finds(t, s, s.cfg.q.Get(s.prefix+by.step), by.search, prod) {
				t.Errorf("%s: %s %q does not find product %d", mode, by.step, by.search, prod)
			}
		}
		customer(7, 1, 2, s.vals)
		c := s.vals
		name := "steptest" + strconv.Itoa(i)
		var ids [2]int64
		for k := range ids {
			if _, err := s.first(ctx, &ids[k], s.cfg.q.Get(s.prefix+"new_customer"), c[1], c[2], c[3], c[5], c[6], c[7], c[8], c[9], c[10],
				c[11], c[12], c[13], c[14], name, c[17], c[18], c[19]); err != nil {
				t.Fatalf("%s: new customer %s: %v", mode, name, err)
			}
		}
		if ids[0] <= sc.Customers || ids[1] != 0 {
			t.Errorf("%s: new customer %s twice: ids %v, want a new id then none", mode, name, ids)
		}
		s.Close()
	}
}

// finds tells whether search, through query, returns product prod.
func finds(t *testing.T, s *session, query, search string, prod int64) bool {
	t.Helper()
	rows, err := s.S.Query(context.Background(), query, search, 50)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	found := false
	for rows.Next() {
		var id int64
		var title, actor string
		var price float64
		if err := rows.Scan(&id, &title, &actor, &price); err != nil {
			t.Fatal(err)
		}
		found = found || id == prod
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return found
}

func TestStepsSQLite(t *testing.T) { testSteps(t, "sqlite:"+t.TempDir()+"/d.db", "") }

func TestStepsPostgres(t *testing.T) {
	testSteps(t, pgtest.NewDB(t), workload.ModeProcs, workload.ModeSQL)
}

package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbrig/dbrig/internal/catalog"
	"github.com/dbrig/dbrig/internal/catalog/catalogtest"
	_ "github.com/dbrig/dbrig/internal/catalog/postgres"
	_ "github.com/dbrig/dbrig/internal/catalog/sqlite"
	"github.com/dbrig/dbrig/internal/server/postgres/pgtest"
	"github.com/dbrig/dbrig/internal/web"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// filled is a catalogue at url holding real documents of every kind the
// reports have, and a series of 30 runs of one setup (vus=8) that the
// test moved down 10% from the 20th, beside 4 runs at vus=4 tagged half: the IDs of
// the series, in order.
func filled(t *testing.T, url string) (*catalog.Catalog, []string) {
	t.Helper()
	ctx := context.Background()
	c, err := catalog.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	for _, f := range []string{"telemetry-run.json", "cpu-run.json", "dvdstore-run.json", "sweep.json"} {
		b, err := os.ReadFile(filepath.Join("../report/testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.Add(ctx, filepath.Join("../report/testdata", f), b, catalog.Meta{}); err != nil {
			t.Fatal(err)
		}
	}
	var ids []string
	for _, b := range catalogtest.Step(t, 0.9, 3) {
		e, _, err := c.Add(ctx, "", b, catalog.Meta{Tags: []string{"nightly"}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e.ID)
	}
	tpl := catalogtest.Template(t)
	for i := range 4 {
		if _, _, err := c.Add(ctx, "", catalogtest.Scaled(t, tpl, 0.5, 40+i, 4), catalog.Meta{Tags: []string{"half"}}); err != nil {
			t.Fatal(err)
		}
	}
	return c, ids
}

func get(t *testing.T, srv *httptest.Server, path, token string, v any) int {
	t.Helper()
	req, _ := http.NewRequest("GET", srv.URL+path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if v != nil && resp.StatusCode == 200 {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("GET %s: %v: %s", path, err, b)
		}
	}
	return resp.StatusCode
}

// TestAPI: the REST API on both backends: list with filters, one run,
// its document, history with the change point at run 20, regress,
// compare, and the refusals.
func TestAPI(t *testing.T) {
	for name, url := range map[string]func(t *testing.T) string{
		"SQLite":   func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "c.db") },
		"Postgres": func(t *testing.T) string { return pgtest.NewDB(t) },
	} {
		t.Run(name, func(t *testing.T) {
			c, ids := filled(t, url(t))
			srv := httptest.NewServer(web.Handler(web.Options{Catalog: c}))
			defer srv.Close()
			var list struct {
				Runs  []catalog.Entry `json:"runs"`
				Total int             `json:"total"`
			}
			if code := get(t, srv, "/api/runs?limit=5", "", &list); code != 200 || len(list.Runs) != 5 || list.Total != 38 {
				t.Fatalf("runs: %d, %d of %d", code, len(list.Runs), list.Total)
			}
			if get(t, srv, "/api/runs?where=config.vus%3D4&tag=half", "", &list); list.Total != 4 {
				t.Fatalf("where config.vus=4: %d", list.Total)
			}
			if code := get(t, srv, "/api/runs?where=bogus", "", nil); code != 400 {
				t.Fatalf("a bad where: %d", code)
			}
			var e catalog.Entry
			if code := get(t, srv, "/api/runs/"+ids[19][:10], "", &e); code != 200 || e.ID != ids[19] {
				t.Fatalf("one run: %d %s", code, e.ID)
			}
			if code := get(t, srv, "/api/runs/abcdef123456", "", nil); code != 404 {
				t.Fatalf("no such run: %d", code)
			}
			var doc map[string]any
			if code := get(t, srv, "/api/runs/"+ids[0]+"/document", "", &doc); code != 200 || doc["workload"] != "tproc-c" {
				t.Fatalf("document: %d", code)
			}
			var trend catalog.Trend
			if code := get(t, srv, "/api/history?metric=nopm&tag=nightly", "", &trend); code != 200 || len(trend.Series) != 1 ||
				len(trend.Series[0].Changes) != 1 || trend.Series[0].Changes[0].ID != ids[19] {
				t.Fatalf("history: %d %+v", code, trend.Series)
			}
			var chk catalog.Check
			if code := get(t, srv, "/api/regress?metric=nopm&tag=nightly&run="+ids[19], "", &chk); code != 200 || chk.Test.Verdict != catalog.Regression {
				t.Fatalf("regress: %d %+v", code, chk.Test)
			}
			var cmp catalog.Comparison
			if code := get(t, srv, "/api/compare?id="+ids[0]+"&id="+ids[25]+"&id="+ids[29], "", &cmp); code != 200 || len(cmp.Entries) != 3 || len(cmp.Metrics) == 0 || len(cmp.Telemetry) == 0 {
				t.Fatalf("compare: %d %+v", code, cmp)
			}
			if code := get(t, srv, "/runs/"+ids[19]+"/report", "", nil); code != 200 {
				t.Fatalf("report: %d", code)
			}
		})
	}
}

func post(t *testing.T, srv *httptest.Server, body io.Reader, length int64, ctype, token string) int {
	t.Helper()
	req, _ := http.NewRequest("POST", srv.URL+"/api/runs", body)
	req.ContentLength = length
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		return -1 // the server hung up on an upload it refused
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// zeros reads n zero bytes, a gigabyte without holding one.
type zeros struct{ n int64 }

func (z *zeros) Read(p []byte) (int, error) {
	if z.n <= 0 {
		return 0, io.EOF
	}
	n := min(int64(len(p)), z.n)
	clear(p[:n])
	z.n -= n
	return int(n), nil
}

// TestGuard: the token, the uploads' limits and checks, and the loopback
// names a server without a token answers to.
func TestGuard(t *testing.T) {
	c, _ := filled(t, "sqlite:"+filepath.Join(t.TempDir(), "c.db"))
	const token = "0123456789abcdef-token"
	srv := httptest.NewServer(web.Handler(web.Options{Catalog: c, Token: token, MaxUpload: 1 << 20}))
	defer srv.Close()
	for _, tc := range []struct {
		token string
		want  int
	}{{"", 401}, {"wrong-token-wrong-token", 401}, {token + "x", 401}, {token, 200}} {
		if code := get(t, srv, "/api/runs", tc.token, nil); code != tc.want {
			t.Errorf("token %q: %d, want %d", tc.token, code, tc.want)
		}
	}
	// The UI without the token goes to the login page, which sets a
	// cookie the API takes.
	noRedirect := *srv.Client()
	noRedirect.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := noRedirect.Get(srv.URL + "/")
	if err != nil || resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login" {
		t.Fatalf("the UI without a token: %v %v", resp.StatusCode, err)
	}
	resp, err = noRedirect.PostForm(srv.URL+"/login", map[string][]string{"token": {token}})
	if err != nil || len(resp.Cookies()) != 1 || !resp.Cookies()[0].HttpOnly {
		t.Fatalf("login: %v %+v", err, resp.Cookies())
	}
	req, _ := http.NewRequest("GET", srv.URL+"/api/runs", nil)
	req.AddCookie(resp.Cookies()[0])
	if resp, err := srv.Client().Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("the cookie: %v %v", resp.StatusCode, err)
	}

	doc, _ := os.ReadFile("../report/testdata/blockio-run.json")
	for _, tc := range []struct {
		name   string
		body   io.Reader
		length int64
		ctype  string
		want   []int
	}{
		{"a document", bytes.NewReader(doc), int64(len(doc)), "application/json", []int{201}},
		{"the same again", bytes.NewReader(doc), int64(len(doc)), "application/json", []int{200}},
		{"as a form", bytes.NewReader(doc), int64(len(doc)), "text/plain", []int{415}},
		{"1 GB said", &zeros{1 << 30}, 1 << 30, "application/json", []int{413, -1}},
		{"1 GB chunked", &zeros{1 << 30}, -1, "application/json", []int{413, -1}},
		{"not a document", strings.NewReader(`{"hello": "world"}`), -1, "application/json", []int{400}},
		{"not JSON", strings.NewReader(`<html>`), -1, "application/json", []int{400}},
	} {
		got := post(t, srv, tc.body, tc.length, tc.ctype, token)
		if !contains(tc.want, got) {
			t.Errorf("%s: %d, want one of %v", tc.name, got, tc.want)
		}
	}
	var list struct{ Total int }
	get(t, srv, "/api/runs", token, &list)
	if list.Total != 39 {
		t.Fatalf("after the uploads: %d entries, want 39", list.Total)
	}
	// Without a token the server answers to loopback names only.
	open := httptest.NewServer(web.Handler(web.Options{Catalog: c}))
	defer open.Close()
	req, _ = http.NewRequest("GET", open.URL+"/api/runs", nil)
	req.Host = "rebound.example.com"
	if resp, err := open.Client().Do(req); err != nil || resp.StatusCode != 403 {
		t.Fatalf("another host name: %v %v", resp.StatusCode, err)
	}
	req, _ = http.NewRequest("POST", open.URL+"/api/runs", bytes.NewReader(doc))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", "http://evil.example.com")
	if resp, err := open.Client().Do(req); err != nil || resp.StatusCode != 403 {
		t.Fatalf("a post from another origin: %v %v", resp.StatusCode, err)
	}
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// hostile is the document b with s in every string field but those
// that say what the document is (its schema, its kind, a series'
// phase), which a document must keep to be one.
func hostile(t testing.TB, b []byte, s string) []byte {
	t.Helper()
	var d any
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	keep := map[string]bool{"phase": true, "kind": true, "started_at": true, "histogram": true, "primary_metric": true, "primary_transaction": true, "headline": true}
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, sub := range x {
				if _, isStr := sub.(string); isStr && keep[k] {
					continue
				}
				x[k] = walk(sub)
			}
		case []any:
			for i := range x {
				x[i] = walk(x[i])
			}
		case string:
			return s + x
		}
		return v
	}
	out, err := json.Marshal(walk(d))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// FuzzEscapes: a document with markup in every string field goes in, and
// nothing of it comes out as markup: the API's JSON escapes <, > and &,
// and the report escapes what it shows.
func FuzzEscapes(f *testing.F) {
	for _, s := range []string{`<script>alert(1)</script>`, `"><img src=x onerror=alert(1)>`, `</script><script>alert(2)//`, `{{.}}`, "\u2028<b>"} {
		f.Add(s)
	}
	c, _ := catalog.Open(context.Background(), "sqlite:"+filepath.Join(f.TempDir(), "c.db"))
	srv := httptest.NewServer(web.Handler(web.Options{Catalog: c}))
	defer srv.Close()
	defer c.Close()
	doc, _ := os.ReadFile("../report/testdata/telemetry-run.json")
	f.Fuzz(func(t *testing.T, s string) {
		if !strings.ContainsAny(s, "<>&") {
			return
		}
		b := hostile(t, doc, s)
		req, _ := http.NewRequest("POST", srv.URL+"/api/runs", bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var e catalog.Entry
		json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != 201 && resp.StatusCode != 200 {
			return // a string that makes no document (a time, say) is refused, not shown
		}
		for _, path := range []string{"/api/runs?limit=3", "/api/runs/" + e.ID, "/runs/" + e.ID + "/report", fmt.Sprintf("/api/compare?id=%s&id=%s", e.ID, e.ID)} {
			resp, err := srv.Client().Get(srv.URL + path)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if bytes.Contains(body, []byte(s)) {
				t.Fatalf("%s shows %q as it came", path, s)
			}
		}
	})
}

package web

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/dbrig/dbrig/internal/catalog"
	"github.com/dbrig/dbrig/internal/report"
)

// filter is the catalogue filter in a request's query: workload, target,
// host, kind, tool, tag (repeated), where (repeated), since, until, limit.
func (s *server) filter(q url.Values, limit int) (catalog.Filter, error) {
	fq := catalog.Query{Workload: q.Get("workload"), Target: q.Get("target"), Host: q.Get("host"), Kind: q.Get("kind"),
		Tool: q.Get("tool"), Tags: nonEmpty(q["tag"]), Where: nonEmpty(q["where"]), Since: q.Get("since"), Until: q.Get("until"), Limit: limit}
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil {
			return catalog.Filter{}, fmt.Errorf("limit %q is not a number", l)
		}
		fq.Limit = n
	}
	return fq.Filter(s.o.Now())
}

func nonEmpty(s []string) []string {
	var out []string
	for _, v := range s {
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}

// runs is GET /api/runs: the entries the filter picks, the newest first,
// 200 unless limit says otherwise, and how many match in all.
func (s *server) runs(w http.ResponseWriter, r *http.Request) {
	f, err := s.filter(r.URL.Query(), 200)
	if err != nil {
		failErr(w, err)
		return
	}
	es, err := s.o.Catalog.List(r.Context(), f)
	if err != nil {
		failErr(w, err)
		return
	}
	all := f
	all.Limit = 0
	n, err := s.o.Catalog.Count(r.Context(), all)
	if err != nil {
		failErr(w, err)
		return
	}
	if es == nil {
		es = []*catalog.Entry{}
	}
	reply(w, http.StatusOK, map[string]any{"runs": es, "total": n})
}

func (s *server) run(w http.ResponseWriter, r *http.Request) {
	e, err := s.o.Catalog.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		failErr(w, err)
		return
	}
	reply(w, http.StatusOK, e)
}

func (s *server) document(w http.ResponseWriter, r *http.Request) {
	e, err := s.o.Catalog.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		failErr(w, err)
		return
	}
	b, err := s.o.Catalog.Document(r.Context(), e.ID)
	if err != nil {
		failErr(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", catalog.ShortID(e.ID)+".json"))
	w.Write(b)
}

// reportCSP is a report's own: it inlines its scripts and styles, and
// reaches for nothing else.
const reportCSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'self'; base-uri 'none'; form-action 'none'"

// report is a run's (or a sweep's) HTML report, made from the
// catalogue's copy of its document; a sweep's runs are read from beside
// where it was catalogued from, where they still are.
func (s *server) report(w http.ResponseWriter, r *http.Request) {
	e, err := s.o.Catalog.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		failErr(w, err)
		return
	}
	if e.Tool != "dbrig" {
		fail(w, http.StatusNotFound, "a "+e.Tool+" result has no dbrig report; GET /api/runs/"+catalog.ShortID(e.ID)+" has its figures")
		return
	}
	b, err := s.o.Catalog.Document(r.Context(), e.ID)
	if err != nil {
		failErr(w, err)
		return
	}
	d, err := report.Parse(e.Path, b)
	if err != nil {
		failErr(w, err)
		return
	}
	var buf bytes.Buffer
	if err := report.HTML(&buf, d); err != nil {
		failErr(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", reportCSP)
	w.Write(buf.Bytes())
}

// ingest is POST /api/runs: a document made elsewhere, refused past the
// size limit (413), when it is not JSON said to be (415), or not a
// document (400); 201 when new, 200 when it was there already.
func (s *server) ingest(w http.ResponseWriter, r *http.Request) {
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		fail(w, http.StatusUnsupportedMediaType, "send the document as Content-Type: application/json")
		return
	}
	if r.ContentLength > s.o.MaxUpload {
		fail(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("a document may be %d bytes at most here (dbrig serve --max-upload)", s.o.MaxUpload))
		return
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.o.MaxUpload))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		fail(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("a document may be %d bytes at most here (dbrig serve --max-upload)", s.o.MaxUpload))
		return
	case err != nil:
		fail(w, http.StatusBadRequest, "the upload broke off: "+err.Error())
		return
	}
	q := r.URL.Query()
	e, added, err := s.o.Catalog.Add(r.Context(), "the upload", b, catalog.Meta{Tags: nonEmpty(q["tag"]), Commit: q.Get("commit")})
	if err != nil {
		failErr(w, err)
		return
	}
	status := http.StatusOK
	if added {
		status = http.StatusCreated
	}
	reply(w, status, e)
}

func (s *server) history(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("metric") == "" {
		fail(w, http.StatusBadRequest, "name the metric: /api/history?metric=nopm")
		return
	}
	f, err := s.filter(q, 0)
	if err != nil {
		failErr(w, err)
		return
	}
	t, err := s.o.Catalog.TrendOf(r.Context(), q.Get("metric"), f, q.Get("by"))
	if err != nil {
		failErr(w, err)
		return
	}
	reply(w, http.StatusOK, t)
}

func (s *server) regress(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("metric") == "" {
		fail(w, http.StatusBadRequest, "name the metric: /api/regress?metric=nopm")
		return
	}
	f, err := s.filter(q, 0)
	if err != nil {
		failErr(w, err)
		return
	}
	b := catalog.DefaultBaseline
	if v := q.Get("baseline"); v != "" {
		if b, err = catalog.ParseBaseline(v); err != nil {
			failErr(w, err)
			return
		}
	}
	k, alpha := 1, 0.05
	if v := q.Get("new"); v != "" {
		if k, err = strconv.Atoi(v); err != nil {
			fail(w, http.StatusBadRequest, "new: not a number")
			return
		}
	}
	if v := q.Get("alpha"); v != "" {
		if alpha, err = strconv.ParseFloat(v, 64); err != nil || alpha <= 0 || alpha >= 0.5 {
			fail(w, http.StatusBadRequest, "alpha: want a significance level between 0 and 0.5")
			return
		}
	}
	chk, err := s.o.Catalog.CheckRun(r.Context(), q.Get("metric"), f, q.Get("run"), k, b, alpha)
	if err != nil {
		failErr(w, err)
		return
	}
	reply(w, http.StatusOK, chk)
}

// compare is GET /api/compare?id=A&id=B...: the runs side by side, the
// first the one the others are measured against.
func (s *server) compare(w http.ResponseWriter, r *http.Request) {
	ids := nonEmpty(r.URL.Query()["id"])
	if len(ids) < 2 {
		fail(w, http.StatusBadRequest, "name two runs or more: /api/compare?id=A&id=B")
		return
	}
	var es []*catalog.Entry
	for _, id := range ids {
		e, err := s.o.Catalog.Get(r.Context(), id)
		if err != nil {
			failErr(w, err)
			return
		}
		es = append(es, e)
	}
	reply(w, http.StatusOK, catalog.Compare(es))
}

// fields are the metrics, config keys and workloads of the runs the
// filter picks, for the UI's choices of what to chart and split by.
func (s *server) fields(w http.ResponseWriter, r *http.Request) {
	f, err := s.filter(r.URL.Query(), 0)
	if err != nil {
		failErr(w, err)
		return
	}
	metrics, err := s.o.Catalog.Metrics(r.Context(), f)
	if err != nil {
		failErr(w, err)
		return
	}
	config, err := s.o.Catalog.ConfigKeys(r.Context(), f)
	if err != nil {
		failErr(w, err)
		return
	}
	workloads, err := s.o.Catalog.Workloads(r.Context(), f)
	if err != nil {
		failErr(w, err)
		return
	}
	reply(w, http.StatusOK, map[string]any{"metrics": metrics, "config": config, "workloads": workloads})
}

package deploy

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/exporter"
	"github.com/dbrig/dbrig/internal/workload"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// dashboardFile is the Grafana dashboard, in grafana/.
const dashboardFile = "dbrig.json"

// panelDatasource is the first panel's datasource, as the file writes it.
const panelDatasource = `"datasource": {
        "type": "prometheus",
        "uid": "${datasource}"
      },
      "targets"`

// TestGrafanaDashboard: grafana/dbrig.json decodes strictly as the part of
// Grafana's dashboard model it uses, every query reads only series the
// real exporter serves, through the $datasource variable and filtered by
// $job and $instance, and every dbrig_ metric the exporter serves has a
// panel; and the same file, doctored in one place that matters, fails.
func TestGrafanaDashboard(t *testing.T) {
	files := readDir(t, "grafana", "*.json")
	if _, ok := files[dashboardFile]; !ok {
		t.Fatalf("no %s in grafana/", dashboardFile)
	}
	fams := exporterFamilies(t)
	check := func(f map[string]string) []string { return checkDashboard(f[dashboardFile], fams) }
	if problems := check(files); len(problems) > 0 {
		t.Fatalf("the dashboard:\n%s", strings.Join(problems, "\n"))
	}
	caught(t, files, check, []doctoring{
		{dashboardFile, "sum(rate(dbrig_errors_total{", "sum(rate(dbrig_nonexistent{", "dbrig_nonexistent is no metric the exporter serves"},
		{dashboardFile, "dbrig_transaction_duration_seconds_bucket{", "dbrig_transaction_duration_seconds{", "dbrig_transaction_duration_seconds is a histogram"},
		{dashboardFile, "dbrig_transaction_duration_seconds_bucket{", "dbrig_transactions_total_bucket{", "dbrig_transactions_total is a counter, not a histogram"},
		{dashboardFile, "dbrig_rollbacks_total{", "dbrig_retries_total{", "dbrig_rollbacks_total, which no panel reads"},
		{dashboardFile, "rate(dbrig_retries_total{", "max_over_time(dbrig_retries_total{", "reads counter dbrig_retries_total other than through rate"},
		{dashboardFile, `"sum(dbrig_vus{job=~\"$job\",instance=~\"$instance\"})"`, `"sum(rate(dbrig_vus{job=~\"$job\",instance=~\"$instance\"}[5m]))"`, "takes rate of dbrig_vus, which is not a counter"},
		{dashboardFile, "sum(dbrig_vus{", "sum((dbrig_vus{", "unbalanced parentheses"},
		{dashboardFile, `type=~\"$type\"`, `tx=~\"$type\"`, "matches label tx, which dbrig_transactions_total does not carry"},
		{dashboardFile, `type=~\"$type\"`, `type=~\"$tx\"`, "uses $tx, which is no variable of the dashboard"},
		{dashboardFile, `,instance=~\"$instance\"`, "", `without job=~"$job" and instance=~"$instance"`},
		{dashboardFile, "sum by (type) (", "sum by (tx) (", "groups by tx, which none of its series carry"},
		{dashboardFile, `"uid": "${datasource}"`, `"uid": "P1809F7CD0C75ACF3"`, "not the $datasource variable"},
		{dashboardFile, panelDatasource, `"targets"`, `panel 1 "Phase" has no datasource`},
		{dashboardFile, `"name": "datasource"`, `"name": "prom"`, "no variable datasource of type datasource"},
		{dashboardFile, `"gridPos"`, `"gridpos"`, `unknown field "gridpos"`},
		{dashboardFile, `"legendFormat"`, `"legend"`, `unknown field "legend"`},
		{dashboardFile, `"id": 2,`, `"id": 1,`, "id 1 is taken by two panels"},
		{dashboardFile, `"title": "Phase"`, `"title": ""`, "has no title"},
		{dashboardFile, `"type": "timeseries"`, `"type": "graph"`, `type "graph" is not one this test knows`},
		{dashboardFile, `"x": 4,`, `"x": 3,`, "overlaps"},
		{dashboardFile, `"query": "label_values(dbrig_vus, job)"`, `"query": "label_values(dbrig_vu, job)"`, "dbrig_vu is no metric the exporter serves"},
		{dashboardFile, `"query": "label_values(dbrig_vus, job)"`, `"query": "label_values(dbrig_vus, jobs)"`, "lists label jobs, which dbrig_vus does not carry"},
	})
}

// liveRun stands in for an opened run, as the exporter's own tests do:
// Follow asks it only for its transaction names and, as a Rater, for its
// rates, so that the headline is served too.
type liveRun struct{ workload.Run }

func (liveRun) TxNames() []string { return []string{"new-order", "payment"} }
func (liveRun) Rates(counts []int64) map[string]float64 {
	return map[string]float64{"nopm": float64(counts[0]) * 60}
}

// family is what a scrape says of a metric family: its type, and the
// labels its series carry, with the job and instance Prometheus adds.
type family struct {
	typ    dto.MetricType
	labels map[string]bool
}

// exporterFamilies starts the real exporter, has it follow a run as
// `dbrig run --metrics-addr` does, tells it a little of the run, and
// scrapes it: the families Prometheus would store.
func exporterFamilies(t *testing.T) map[string]family {
	t.Helper()
	s, err := exporter.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	info := workload.Info{Metrics: []workload.Metric{{Key: "nopm", Unit: "new orders per minute", HigherIsBetter: true}}, Primary: "nopm"}
	r := s.Follow(info, liveRun{}, nil)
	r.Phase(driver.PhaseRampup)
	r.Phase(driver.PhaseMeasure)
	r.Transaction(0, 3*time.Millisecond, 1, driver.Committed)
	r.Transaction(1, 40*time.Millisecond, 0, driver.RolledBack)
	r.Transaction(1, time.Second, 0, driver.Failed)
	r.Transaction(0, time.Second, 0, driver.InDoubt)
	r.Tick(driver.Tick{Phase: driver.PhaseMeasure, VUs: 2, Counts: []int64{1, 1}})

	resp, err := http.Get("http://" + s.Addr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("the scrape: %v", err)
	}
	fams := map[string]family{}
	for name, mf := range mfs {
		f := family{typ: mf.GetType(), labels: map[string]bool{"job": true, "instance": true}}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				f.labels[l.GetName()] = true
			}
		}
		fams[name] = f
	}
	// What the dashboard is about: a scrape without them would pass any
	// dashboard that reads none of them.
	for _, name := range []string{"dbrig_transactions_total", "dbrig_transaction_duration_seconds", "dbrig_headline"} {
		if _, ok := fams[name]; !ok {
			t.Fatalf("the exporter serves no %s", name)
		}
	}
	return fams
}

// The part of Grafana's dashboard model (schemaVersion 39) the dashboard
// uses. A field not here fails the decoding; a panel's options and field
// config are its plugin's, and only their datasources are checked.
type (
	grafanaDashboard struct {
		Annotations struct {
			List []json.RawMessage `json:"list"`
		} `json:"annotations"`
		Description          string            `json:"description"`
		Editable             bool              `json:"editable"`
		FiscalYearStartMonth int               `json:"fiscalYearStartMonth"`
		GraphTooltip         int               `json:"graphTooltip"`
		Links                []json.RawMessage `json:"links"`
		LiveNow              bool              `json:"liveNow"`
		Panels               []grafanaPanel    `json:"panels"`
		Refresh              string            `json:"refresh"`
		SchemaVersion        int               `json:"schemaVersion"`
		Tags                 []string          `json:"tags"`
		Templating           struct {
			List []grafanaVariable `json:"list"`
		} `json:"templating"`
		Time struct {
			From string `json:"from"`
			To   string `json:"to"`
		} `json:"time"`
		Timepicker struct {
			RefreshIntervals []string `json:"refresh_intervals"`
		} `json:"timepicker"`
		Timezone  string `json:"timezone"`
		Title     string `json:"title"`
		UID       string `json:"uid"`
		Version   int    `json:"version"`
		WeekStart string `json:"weekStart"`
	}
	grafanaPanel struct {
		ID          int    `json:"id"`
		Type        string `json:"type"`
		Title       string `json:"title"`
		Description string `json:"description"`
		GridPos     struct {
			X int `json:"x"`
			Y int `json:"y"`
			W int `json:"w"`
			H int `json:"h"`
		} `json:"gridPos"`
		Datasource  *grafanaRef     `json:"datasource"`
		Targets     []grafanaTarget `json:"targets"`
		FieldConfig json.RawMessage `json:"fieldConfig"`
		Options     json.RawMessage `json:"options"`
		Collapsed   bool            `json:"collapsed"` // a row's
		Panels      []grafanaPanel  `json:"panels"`    // a collapsed row's
	}
	grafanaTarget struct {
		Datasource   *grafanaRef `json:"datasource"`
		EditorMode   string      `json:"editorMode"`
		Expr         string      `json:"expr"`
		LegendFormat string      `json:"legendFormat"`
		Range        bool        `json:"range"`
		Instant      bool        `json:"instant"`
		RefID        string      `json:"refId"`
	}
	grafanaVariable struct {
		Type        string            `json:"type"`
		Name        string            `json:"name"`
		Label       string            `json:"label"`
		Datasource  *grafanaRef       `json:"datasource"`
		Definition  string            `json:"definition"`
		Query       json.RawMessage   `json:"query"` // a string, or a query variable's object
		Refresh     int               `json:"refresh"`
		Regex       string            `json:"regex"`
		Sort        int               `json:"sort"`
		IncludeAll  bool              `json:"includeAll"`
		Multi       bool              `json:"multi"`
		AllValue    string            `json:"allValue"`
		Current     json.RawMessage   `json:"current"`
		Options     []json.RawMessage `json:"options"`
		Hide        int               `json:"hide"`
		SkipURLSync bool              `json:"skipUrlSync"`
	}
	grafanaRef struct {
		Type string `json:"type"`
		UID  string `json:"uid"`
	}
	// promVariableQuery is a Prometheus query variable's query.
	promVariableQuery struct {
		QryType int    `json:"qryType"`
		Query   string `json:"query"`
		RefID   string `json:"refId"`
	}
)

// datasourceVar is the one datasource every reference names.
var datasourceVar = grafanaRef{Type: "prometheus", UID: "${datasource}"}

// panelTypes are the panel plugins the dashboard may use.
var panelTypes = []string{"row", "stat", "state-timeline", "timeseries"}

// checkDashboard decodes the dashboard and returns what is wrong with it,
// a line each, against fams, the families the exporter serves.
func checkDashboard(text string, fams map[string]family) []string {
	var d grafanaDashboard
	dec := json.NewDecoder(strings.NewReader(text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		return []string{dashboardFile + ": " + err.Error()}
	}
	if dec.More() {
		return []string{dashboardFile + ": more than one JSON value"}
	}
	var src any
	if err := json.Unmarshal([]byte(text), &src); err != nil {
		return []string{dashboardFile + ": " + err.Error()}
	}
	// encoding/json matches field names whatever their case, and Grafana
	// does not: a key the decoded dashboard does not write back is unknown.
	back, err := json.Marshal(d)
	if err != nil {
		return []string{dashboardFile + ": " + err.Error()}
	}
	var decoded any
	if err := json.Unmarshal(back, &decoded); err != nil {
		return []string{dashboardFile + ": " + err.Error()}
	}
	problems := unknownKeys(src, decoded, "")
	problems = append(problems, datasourceRefs(src, "")...)
	if len(problems) > 0 {
		return problems
	}

	c := dashboardCheck{fams: fams, vars: map[string]bool{}, read: map[string]bool{}}
	c.variables(d.Templating.List)
	c.panels(d.Panels, map[int]string{}, nil)
	for _, name := range slices.Sorted(maps.Keys(fams)) {
		if strings.HasPrefix(name, "dbrig_") && !c.read[name] {
			c.bad("the exporter serves %s, which no panel reads", name)
		}
	}
	return c.problems
}

// unknownKeys are the keys of src, at any depth, that its decoding left
// out of decoded.
func unknownKeys(src, decoded any, at string) []string {
	var problems []string
	switch s := src.(type) {
	case map[string]any:
		dm, _ := decoded.(map[string]any)
		for _, k := range slices.Sorted(maps.Keys(s)) {
			dv, ok := dm[k]
			if !ok {
				problems = append(problems, fmt.Sprintf("%s: %s: unknown field %q", dashboardFile, cmp.Or(at, "the dashboard"), k))
				continue
			}
			problems = append(problems, unknownKeys(s[k], dv, at+"."+k)...)
		}
	case []any:
		da, _ := decoded.([]any)
		for i := range s {
			if i < len(da) {
				problems = append(problems, unknownKeys(s[i], da[i], fmt.Sprintf("%s[%d]", at, i))...)
			}
		}
	}
	return problems
}

// datasourceRefs: every "datasource" key, wherever it is, names the
// $datasource variable, not a datasource of one Grafana's.
func datasourceRefs(v any, at string) []string {
	var problems []string
	switch v := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if k == "datasource" && v[k] != nil {
				b, _ := json.Marshal(v[k])
				var ref grafanaRef
				dec := json.NewDecoder(bytes.NewReader(b))
				dec.DisallowUnknownFields()
				if err := dec.Decode(&ref); err != nil || ref != datasourceVar {
					problems = append(problems, fmt.Sprintf("%s: %s.datasource is %s, not the $datasource variable", dashboardFile, at, b))
				}
				continue
			}
			problems = append(problems, datasourceRefs(v[k], at+"."+k)...)
		}
	case []any:
		for i := range v {
			problems = append(problems, datasourceRefs(v[i], fmt.Sprintf("%s[%d]", at, i))...)
		}
	}
	return problems
}

// dashboardCheck gathers the problems of a decoded dashboard.
type dashboardCheck struct {
	fams     map[string]family
	vars     map[string]bool // the dashboard's variables
	read     map[string]bool // the families some panel reads
	problems []string
}

func (c *dashboardCheck) bad(format string, a ...any) {
	c.problems = append(c.problems, dashboardFile+": "+fmt.Sprintf(format, a...))
}

// labelValues is a Prometheus query variable's label_values(SELECTOR, LABEL).
var labelValues = regexp.MustCompile(`^label_values\((.+),\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)$`)

// variables: the datasource variable picks a Prometheus, and every query
// variable lists a label of a series the exporter serves, through it.
func (c *dashboardCheck) variables(vars []grafanaVariable) {
	for _, v := range vars {
		if c.vars[v.Name] {
			c.bad("variable %s is defined twice", v.Name)
		}
		c.vars[v.Name] = true
	}
	for _, v := range vars {
		switch v.Type {
		case "datasource":
			var q string
			if err := json.Unmarshal(v.Query, &q); err != nil || q != "prometheus" {
				c.bad("datasource variable %s picks %s, not prometheus", v.Name, v.Query)
			}
		case "query":
			c.queryVariable(v)
		default:
			c.bad("variable %s is of type %q, not one this test knows", v.Name, v.Type)
		}
	}
	if i := slices.IndexFunc(vars, func(v grafanaVariable) bool { return v.Name == "datasource" }); i < 0 || vars[i].Type != "datasource" {
		c.bad("no variable datasource of type datasource: the panels' ${datasource} names nothing")
	}
}

func (c *dashboardCheck) queryVariable(v grafanaVariable) {
	where := "variable " + v.Name
	if v.Datasource == nil {
		c.bad("%s has no datasource: Grafana's default would stand in", where)
	}
	var q promVariableQuery
	dec := json.NewDecoder(bytes.NewReader(v.Query))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&q); err != nil {
		c.bad("%s: its query: %v", where, err)
		return
	}
	if v.Definition != q.Query {
		c.bad("%s: its definition %q is not its query %q", where, v.Definition, q.Query)
	}
	m := labelValues.FindStringSubmatch(q.Query)
	if m == nil {
		c.bad("%s: %q is not label_values(METRIC, LABEL)", where, q.Query)
		return
	}
	pq, err := parsePromQL(m[1])
	if err != nil {
		c.bad("%s: %v", where, err)
		return
	}
	c.usesVariables(where, m[1])
	if len(pq.uses) != 1 {
		c.bad("%s: %q selects %d metrics, want one", where, m[1], len(pq.uses))
		return
	}
	u := pq.uses[0]
	f, _, ok := c.resolve(where, u)
	if ok && !f.labels[m[2]] {
		c.bad("%s lists label %s, which %s does not carry", where, m[2], u.name)
	}
}

// panels checks each panel and its targets' queries; ids are the ids
// taken so far, placed the rectangles of the panels at the same level.
func (c *dashboardCheck) panels(ps []grafanaPanel, ids map[int]string, placed []grafanaPanel) {
	for _, p := range ps {
		where := fmt.Sprintf("panel %d %q", p.ID, p.Title)
		if p.Title == "" {
			c.bad("panel %d has no title", p.ID)
		}
		if other, taken := ids[p.ID]; taken || p.ID <= 0 {
			c.bad("id %d is taken by two panels, %q and %q, or is not positive", p.ID, other, p.Title)
		}
		ids[p.ID] = p.Title
		if !slices.Contains(panelTypes, p.Type) {
			c.bad("%s: type %q is not one this test knows (%s)", where, p.Type, strings.Join(panelTypes, ", "))
		}
		g := p.GridPos
		if g.W < 1 || g.H < 1 || g.X < 0 || g.Y < 0 || g.X+g.W > 24 {
			c.bad("%s: gridPos %+v is not within Grafana's 24 columns", where, g)
		}
		for _, q := range placed {
			h := q.GridPos
			if g.X < h.X+h.W && h.X < g.X+g.W && g.Y < h.Y+h.H && h.Y < g.Y+g.H {
				c.bad("%s overlaps panel %d %q", where, q.ID, q.Title)
			}
		}
		placed = append(placed, p)
		if p.Type == "row" {
			if len(p.Targets) > 0 {
				c.bad("%s: a row has targets", where)
			}
			c.panels(p.Panels, ids, nil)
			continue
		}
		if len(p.Panels) > 0 {
			c.bad("%s: only a row holds panels", where)
		}
		if p.Datasource == nil {
			c.bad("%s has no datasource: Grafana's default would stand in", where)
		}
		if len(p.Targets) == 0 {
			c.bad("%s has no targets", where)
		}
		refs := map[string]bool{}
		for _, t := range p.Targets {
			tw := where + ", query " + t.RefID
			if t.RefID == "" || refs[t.RefID] {
				c.bad("%s: refId %q is empty or taken", where, t.RefID)
			}
			refs[t.RefID] = true
			if t.Datasource == nil {
				c.bad("%s has no datasource: Grafana's default would stand in", tw)
			}
			c.expr(tw, t.Expr)
		}
	}
}

// expr checks one panel query: every series it reads is one the exporter
// serves, read as its type is read, filtered by the run's variables.
func (c *dashboardCheck) expr(where, expr string) {
	if strings.TrimSpace(expr) == "" {
		c.bad("%s has no expr", where)
		return
	}
	q, err := parsePromQL(expr)
	if err != nil {
		c.bad("%s: %v", where, err)
		return
	}
	c.usesVariables(where, expr)
	if len(q.uses) == 0 {
		c.bad("%s reads no metric", where)
	}
	carried := map[string]bool{}
	for _, u := range q.uses {
		f, base, ok := c.resolve(where, u)
		if !ok {
			continue
		}
		c.read[base] = true
		maps.Copy(carried, f.labels)
		switch {
		case f.typ == dto.MetricType_COUNTER && !slices.Contains([]string{"rate", "irate", "increase"}, u.fn):
			c.bad("%s reads counter %s other than through rate, irate or increase", where, u.name)
		case f.typ != dto.MetricType_COUNTER && slices.Contains([]string{"rate", "irate", "increase"}, u.fn):
			c.bad("%s takes %s of %s, which is not a counter", where, u.fn, u.name)
		}
		if u.matchers["job"] != `=~"$job"` || u.matchers["instance"] != `=~"$instance"` {
			c.bad(`%s reads %s without job=~"$job" and instance=~"$instance"`, where, u.name)
		}
	}
	for _, l := range q.grouping {
		if len(carried) > 0 && !carried[l] {
			c.bad("%s groups by %s, which none of its series carry", where, l)
		}
	}
}

// resolve is the family of the series u selects and that family's name,
// _bucket, _sum and _count being a histogram's, and checks the labels u
// matches on.
func (c *dashboardCheck) resolve(where string, u use) (family, string, bool) {
	f, base, err := seriesFamily(c.fams, u.name)
	if err != nil {
		c.bad("%s: %v", where, err)
		return family{}, "", false
	}
	for _, l := range slices.Sorted(maps.Keys(u.matchers)) {
		if !f.labels[l] {
			c.bad("%s matches label %s, which %s does not carry", where, l, u.name)
		}
	}
	return f, base, true
}

// seriesFamily is the family of the series name: a counter or gauge of
// that name, or a histogram's _bucket (with le), _sum or _count (each a
// counter); and the name of the family.
func seriesFamily(fams map[string]family, name string) (family, string, error) {
	if f, ok := fams[name]; ok {
		if f.typ == dto.MetricType_HISTOGRAM {
			return family{}, "", fmt.Errorf("%s is a histogram: its series are %[1]s_bucket, %[1]s_sum and %[1]s_count", name)
		}
		return f, name, nil
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		base, ok := strings.CutSuffix(name, suffix)
		if !ok {
			continue
		}
		f, ok := fams[base]
		if !ok {
			break
		}
		if f.typ != dto.MetricType_HISTOGRAM && (suffix == "_bucket" || f.typ != dto.MetricType_SUMMARY) {
			return family{}, "", fmt.Errorf("%s: %s is a %s, not a histogram", name, base, strings.ToLower(f.typ.String()))
		}
		part := family{typ: dto.MetricType_COUNTER, labels: maps.Clone(f.labels)}
		if suffix == "_bucket" {
			part.labels["le"] = true
		}
		return part, base, nil
	}
	return family{}, "", fmt.Errorf("%s is no metric the exporter serves", name)
}

// grafanaVar is a variable's use in a query: $name or ${name}.
var grafanaVar = regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)`)

// usesVariables: every variable text uses is the dashboard's, or one of
// Grafana's own ($__rate_interval, $__interval...).
func (c *dashboardCheck) usesVariables(where, text string) {
	for _, m := range grafanaVar.FindAllStringSubmatch(text, -1) {
		if !c.vars[m[1]] && !strings.HasPrefix(m[1], "__") {
			c.bad("%s uses $%s, which is no variable of the dashboard", where, m[1])
		}
	}
}

// use is one metric selector of a query: the metric's name, its matchers
// by label (`=~"$job"`), and the function that reads it, innermost.
type use struct {
	name     string
	matchers map[string]string
	fn       string
}

// promQuery is what a PromQL expression reads, and the labels its by,
// without, on, ignoring and group_ clauses name.
type promQuery struct {
	uses     []use
	grouping []string
}

var (
	// promGrouping words take a list of labels in parentheses.
	promGrouping = []string{"by", "without", "on", "ignoring", "group_left", "group_right"}
	// promWords are PromQL's other keywords, no metric's name.
	promWords = []string{"bool", "and", "or", "unless", "offset", "atan2", "inf", "nan", "start", "end"}
	// promAggregations may put their by or without before their arguments.
	promAggregations = []string{"sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values", "bottomk", "topk", "quantile", "limitk", "limit_ratio"}
)

// parsePromQL reads expr far enough to name every metric it selects: it
// steps over strings, range and subquery brackets, numbers and Grafana's
// variables, tells a function (a name before "(") and a keyword from a
// metric, and reads a selector's matchers.
func parsePromQL(expr string) (promQuery, error) {
	var q promQuery
	var stack []string // the function of each open parenthesis, or ""
	fn := ""           // the function whose "(" comes next
	for i := 0; i < len(expr); {
		ch := expr[i]
		switch {
		case ch == '"' || ch == '\'' || ch == '`':
			end, err := skipString(expr, i)
			if err != nil {
				return q, err
			}
			i = end
		case ch == '[':
			end := strings.IndexByte(expr[i:], ']')
			if end < 0 {
				return q, fmt.Errorf("%q: an unclosed [", expr)
			}
			i += end + 1
		case ch == '{':
			return q, fmt.Errorf("%q: a selector without a metric name", expr)
		case ch == '(':
			stack = append(stack, fn)
			fn = ""
			i++
		case ch == ')':
			if len(stack) == 0 {
				return q, fmt.Errorf("%q: unbalanced parentheses", expr)
			}
			stack = stack[:len(stack)-1]
			i++
		case ch == '$':
			i++
			if i < len(expr) && expr[i] == '{' {
				i += strings.IndexByte(expr[i:], '}') + 1
			}
			for i < len(expr) && isIdent(expr[i]) {
				i++
			}
		case isIdent(ch) && !isDigit(ch):
			start := i
			for i < len(expr) && isIdent(expr[i]) {
				i++
			}
			word := expr[start:i]
			next := skipSpace(expr, i)
			switch {
			case slices.Contains(promGrouping, word) && next < len(expr) && expr[next] == '(':
				end := strings.IndexByte(expr[next:], ')')
				if end < 0 {
					return q, fmt.Errorf("%q: unbalanced parentheses", expr)
				}
				for l := range strings.SplitSeq(expr[next+1:next+end], ",") {
					if l = strings.TrimSpace(l); l != "" {
						q.grouping = append(q.grouping, l)
					}
				}
				i = next + end + 1
			case slices.Contains(promWords, word) || slices.Contains(promGrouping, word):
			case next < len(expr) && expr[next] == '(':
				fn = word
			case slices.Contains(promAggregations, word) && nextWordIn(expr, next, "by", "without"):
				fn = word
			default:
				u := use{name: word, matchers: map[string]string{}}
				for _, f := range slices.Backward(stack) {
					if f != "" {
						u.fn = f
						break
					}
				}
				if next < len(expr) && expr[next] == '{' {
					end, err := readMatchers(expr, next, u.matchers)
					if err != nil {
						return q, err
					}
					i = end
				}
				q.uses = append(q.uses, u)
			}
		case isDigit(ch) || ch == '.':
			for i < len(expr) && (isIdent(expr[i]) || expr[i] == '.') {
				i++ // a number, or a duration: 0.95, 1e3, 5m
			}
		default:
			i++ // an operator, a comma, a space
		}
	}
	if len(stack) > 0 {
		return q, fmt.Errorf("%q: unbalanced parentheses", expr)
	}
	return q, nil
}

// readMatchers reads the matchers of the selector whose "{" is at
// expr[at] into m, label → operator and quoted value, and returns the
// index after its "}".
func readMatchers(expr string, at int, m map[string]string) (int, error) {
	i := at + 1
	for {
		i = skipSpace(expr, i)
		for i < len(expr) && expr[i] == ',' {
			i = skipSpace(expr, i+1)
		}
		if i >= len(expr) {
			return 0, fmt.Errorf("%q: an unclosed {", expr)
		}
		if expr[i] == '}' {
			return i + 1, nil
		}
		start := i
		for i < len(expr) && isIdent(expr[i]) {
			i++
		}
		label := expr[start:i]
		i = skipSpace(expr, i)
		opStart := i
		for i < len(expr) && strings.IndexByte("=!~", expr[i]) >= 0 {
			i++
		}
		op := expr[opStart:i]
		i = skipSpace(expr, i)
		if label == "" || !slices.Contains([]string{"=", "!=", "=~", "!~"}, op) || i >= len(expr) || strings.IndexByte("\"'`", expr[i]) < 0 {
			return 0, fmt.Errorf("%q: a matcher at %d is not LABEL OP \"VALUE\"", expr, start)
		}
		end, err := skipString(expr, i)
		if err != nil {
			return 0, err
		}
		m[label] = op + `"` + expr[i+1:end-1] + `"`
		i = end
	}
}

// skipString returns the index after the string literal at expr[at].
func skipString(expr string, at int) (int, error) {
	quote := expr[at]
	for i := at + 1; i < len(expr); i++ {
		switch {
		case expr[i] == '\\' && quote != '`':
			i++
		case expr[i] == quote:
			return i + 1, nil
		}
	}
	return 0, fmt.Errorf("%q: an unterminated string", expr)
}

func skipSpace(s string, i int) int {
	for i < len(s) && strings.IndexByte(" \t\r\n", s[i]) >= 0 {
		i++
	}
	return i
}

// nextWordIn: the word at s[i] is one of words.
func nextWordIn(s string, i int, words ...string) bool {
	j := i
	for j < len(s) && isIdent(s[j]) {
		j++
	}
	return slices.Contains(words, s[i:j])
}

func isIdent(c byte) bool {
	return c == '_' || c == ':' || isDigit(c) || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// TestParsePromQL: the reading of PromQL above names the metrics a query
// selects, the function each goes through, and no function, keyword,
// label, string or duration.
func TestParsePromQL(t *testing.T) {
	for _, c := range []struct {
		expr string
		want []use
		by   []string
	}{
		{`sum by (type) (rate(dbrig_transactions_total{job=~"$job",type!="x"}[$__rate_interval]))`,
			[]use{{"dbrig_transactions_total", map[string]string{"job": `=~"$job"`, "type": `!="x"`}, "rate"}}, []string{"type"}},
		{`histogram_quantile(0.99, sum(rate(a_bucket[5m])) by (le, type))`,
			[]use{{"a_bucket", map[string]string{}, "rate"}}, []string{"le", "type"}},
		{`max by (phase) (dbrig_phase{phase="measure"}) == bool 1`,
			[]use{{"dbrig_phase", map[string]string{"phase": `="measure"`}, "max"}}, []string{"phase"}},
		{`(sum(rate(a_sum[1m])) / ignoring(x) sum(rate(a_count[1m]))) offset 5m`,
			[]use{{"a_sum", map[string]string{}, "rate"}, {"a_count", map[string]string{}, "rate"}}, []string{"x"}},
		{`label_replace(up, "dst", "dbrig_not_a_metric", "src", "(.*)") and on() vector(1)`,
			[]use{{"up", map[string]string{}, "label_replace"}}, nil},
		{`count`, []use{{"count", map[string]string{}, ""}}, nil},
	} {
		q, err := parsePromQL(c.expr)
		if err != nil {
			t.Errorf("%s: %v", c.expr, err)
			continue
		}
		if !reflect.DeepEqual(q.uses, c.want) || !slices.Equal(q.grouping, c.by) {
			t.Errorf("%s:\ngot  %v by %v\nwant %v by %v", c.expr, q.uses, q.grouping, c.want, c.by)
		}
	}
	for _, bad := range []string{`sum(rate(a[5m])`, `a{b="c"`, `{__name__="a"}`, `a{b=c}`, `a{b="c}`, `rate(a[5m)`} {
		if q, err := parsePromQL(bad); err == nil {
			t.Errorf("%s: read as %v, want an error", bad, q.uses)
		}
	}
}

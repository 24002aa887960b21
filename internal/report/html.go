package report

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/human"
	"github.com/dbrig/dbrig/internal/result"
)

// The page inlines its chart libraries so that a report opens from disk
// with no network at all; see assets/README.md for where they come from.
var (
	//go:embed assets/chart.umd.js
	chartJS string
	//go:embed assets/chartjs-chart-error-bars.umd.min.js
	errorBarsJS string
	//go:embed page.html.tmpl
	pageHTML string
)

// ChartScripts are the chart libraries every page inlines, for a page
// of another package's that draws as the reports do (dbrig serve's).
func ChartScripts() (chart, errorBars string) { return chartJS, errorBarsJS }

var pageTmpl = template.Must(template.New("page").Parse(pageHTML))

// page is everything the template shows: a header, then blocks in order.
type page struct {
	Title    string
	Subtitle []string
	// Failures say, above the figures, why the run failed: a reader must
	// not take its figures for a healthy run's.
	Failures    []string
	Stats       []stat
	Blocks      []block
	ChartSpecs  []chartSpec
	ChartJS     template.JS
	ErrorBarsJS template.JS
}

type stat struct{ Label, Value string }

// block is one section: any of notes, preformatted lines, a row of charts
// and a table, in that order.
type block struct {
	Heading string
	// ID names the section, for links and tests; most have none.
	ID           string
	Notes        []string
	Pre          string
	Charts       []chartRef
	ChartCaption string
	// KV are small key/value tables laid out side by side.
	KV        []kvGroup
	KVCaption string
	Table     *table
	// key marks a block that a later step adds charts to.
	key string
}

type chartRef struct {
	ID, Label string
	Short     bool
	// Wide takes the whole row, whatever else is in the block.
	Wide bool
}

// chartSpec is one Chart.js chart: the canvas id and the configuration
// handed to new Chart() as is.
type chartSpec struct {
	ID     string `json:"id"`
	Config obj    `json:"config"`
}

type obj = map[string]any

type table struct {
	Class   string
	Head    []cell
	Rows    []row
	Caption string
}

type row struct {
	ID    string
	Cells []cell
}

type cell struct {
	Text, Class, Title string
	Span               int
}

func num(s string) cell { return cell{Text: s, Class: "num"} }

func heads(names ...string) []cell {
	h := make([]cell, len(names))
	for i, n := range names {
		h[i] = cell{Text: n}
		if strings.HasPrefix(n, "#") {
			h[i] = cell{Text: n[1:], Class: "num"}
		}
	}
	return h
}

// addChart adds a chart to the page and returns its reference for a block.
func (p *page) addChart(label string, short bool, cfg obj) chartRef {
	id := fmt.Sprintf("chart-%d", len(p.ChartSpecs)+1)
	p.ChartSpecs = append(p.ChartSpecs, chartSpec{ID: id, Config: cfg})
	return chartRef{ID: id, Label: label, Short: short}
}

func (p *page) render(w io.Writer) error {
	p.ChartJS = template.JS(chartJS)
	p.ErrorBarsJS = template.JS(errorBarsJS)
	if p.ChartSpecs == nil {
		p.ChartSpecs = []chartSpec{}
	}
	var buf bytes.Buffer
	if err := pageTmpl.Execute(&buf, p); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// Doc is a document read for reporting: a run or a sweep, and where it
// came from (a sweep's run documents are relative to its directory).
type Doc struct {
	Path  string
	Run   *result.Document
	Sweep *result.Sweep
}

// Load reads a run or a sweep document, once.
func Load(path string) (*Doc, error) {
	b, err := result.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, b)
}

// Parse is Load of the document b, read from path; a sweep's runs are
// read from beside path, where they are.
func Parse(path string, b []byte) (*Doc, error) {
	if result.IsSweep(b) {
		s, err := result.ParseSweep(path, b)
		if err != nil {
			return nil, err
		}
		fillFromRuns(path, s)
		return &Doc{Path: path, Sweep: s}, nil
	}
	d, err := parseRun(path, b)
	if err != nil {
		return nil, err
	}
	return &Doc{Path: path, Run: d}, nil
}

// fillFromRuns judges each point's runs again from the run documents
// beside the sweep, where they are still there, so that the sweep's table
// agrees with its runs' pages, and a sweep made before verdicts gets
// them; a sweep made before its points kept what the faults cost gets
// that too.
func fillFromRuns(path string, s *result.Sweep) {
	faults := !slices.ContainsFunc(s.Points, func(p result.SweepPoint) bool { return p.Faults != nil })
	for i := range s.Points {
		p := &s.Points[i]
		for rep, run := range p.Runs {
			if run == "" {
				continue
			}
			d, err := result.Read(filepath.Join(filepath.Dir(path), run))
			if err != nil {
				continue
			}
			if len(p.Verdicts) <= rep {
				p.Verdicts = append(p.Verdicts, make([]*result.Verdict, rep+1-len(p.Verdicts))...)
			}
			p.Verdicts[rep] = result.VerdictOf(d)
			if faults {
				p.AddFaults(d)
			}
		}
	}
	if faults {
		result.RecomputeFaults(s)
	}
}

// readRun reads the run document at path, as parseRun does.
func readRun(path string) (*result.Document, error) {
	b, err := result.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseRun(path, b)
}

// parseRun reads the run document b, read from path, and refuses it if
// it contradicts itself: that is no figure to report. It keeps the
// config's integers exact: a seed above 2^53 would otherwise come back as
// a different number.
func parseRun(path string, b []byte) (*result.Document, error) {
	d, err := result.ParseRun(path, b)
	if err != nil {
		return nil, err
	}
	if err := d.SelfCheck(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var raw struct {
		Config json.RawMessage `json:"config"`
	}
	if json.Unmarshal(b, &raw) == nil && len(raw.Config) > 0 {
		dec := json.NewDecoder(bytes.NewReader(raw.Config))
		dec.UseNumber()
		var cfg map[string]any
		if dec.Decode(&cfg) == nil {
			d.Config = cfg
		}
	}
	return d, nil
}

// HTML writes the report for a run or a sweep as one self-contained page.
func HTML(w io.Writer, d *Doc) error {
	return runOrSweepPage(d).render(w)
}

func runOrSweepPage(d *Doc) *page {
	if d.Sweep != nil {
		return sweepPage(d)
	}
	return runPage(d.Run)
}

// configRows are the "Figure 1" rows every report starts with: the host,
// the server and the target.
func hostRows(h result.Host, t result.Target) [][2]string {
	rows := [][2]string{
		{"host", h.Hostname},
		{"CPU model", h.CPUModel},
		{"CPU cores", strconv.Itoa(h.CPUs)},
		{"memory", bytesIEC(h.MemoryBytes)},
		{"kernel", h.Kernel},
		{"OS / arch", strings.Trim(h.OS+" / "+h.Arch, " /")},
		{"server", t.Server()},
		{"target", dbtarget.Redact(t.URL)},
		{"dbrig built with", h.GoVersion},
	}
	out := rows[:0]
	for _, r := range rows {
		if r[1] != "" && r[1] != "0" {
			out = append(out, r)
		}
	}
	return out
}

// kvBlock is a block of key/value tables, one per non-empty group.
func kvBlock(heading string, groups []kvGroup, caption string) block {
	b := block{Heading: heading, KVCaption: caption}
	for _, g := range groups {
		if len(g.Rows) > 0 {
			b.KV = append(b.KV, g)
		}
	}
	return b
}

type kvGroup struct {
	Name string
	Rows [][2]string
}

// flatten turns nested config into sorted "a.b = value" rows.
func flatten(prefix string, v any, out *[][2]string) {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			flatten(p, x[k], out)
		}
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = scalar(e)
		}
		*out = append(*out, [2]string{prefix, strings.Join(parts, ", ")})
	default:
		*out = append(*out, [2]string{prefix, scalar(v)})
	}
}

func scalar(v any) string {
	switch x := v.(type) {
	case nil:
		return "—"
	case string:
		return x
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return strconv.FormatInt(int64(x), 10)
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	case map[string]any, []any:
		b, _ := json.Marshal(x)
		return string(b)
	default:
		return fmt.Sprint(x)
	}
}

// decodeJSON reads raw JSON with exact numbers, for display.
func decodeJSON(raw []byte) any {
	if len(raw) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil
	}
	return v
}

// bytesIEC is a measured size, or nothing where none was measured.
func bytesIEC(n int64) string {
	if n <= 0 {
		return ""
	}
	return human.Bytes(float64(n))
}

func ms(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

func signedPct(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "—"
	}
	return fmt.Sprintf("%+.1f%%", v)
}

// palette is a colour-blind-friendly set (Okabe-Ito, darkened yellow).
var palette = []string{"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#56B4E9", "#E69F00", "#6A3D9A", "#000000"}

func color(i int) string { return palette[i%len(palette)] }

// fade gives a colour with alpha, for fills and non-significant bars.
func fade(hex string, alpha float64) string {
	var r, g, b int
	fmt.Sscanf(hex, "#%02x%02x%02x", &r, &g, &b)
	return fmt.Sprintf("rgba(%d, %d, %d, %.2f)", r, g, b, alpha)
}

func axisTitle(text string) obj { return obj{"display": true, "text": text} }

func chartTitle(text string) obj {
	return obj{"display": true, "text": text, "font": obj{"size": 14, "weight": "bold"}}
}

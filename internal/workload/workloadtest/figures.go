package workloadtest

import (
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/latency"
	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/runner"
	"github.com/dbrig/dbrig/internal/workload"
)

// Run runs r of w on tg for two seconds, without a ramp-up or telemetry,
// on vus virtual users, pooled on connections sessions where that is
// more than 0, and returns its document.
func Run(t testing.TB, tg dbtarget.Target, w workload.Workload, r workload.Run, vus, connections int) *result.Document {
	t.Helper()
	o := runner.Defaults()
	o.VUs, o.Connections, o.Rampup, o.Duration = vus, connections, 0, 2*time.Second
	o.Telemetry.Off = true
	d, err := runner.Run(context.Background(), tg, w, r, o)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Figures are the figures of document d as a merge reads them: each
// transaction's histogram decoded, the counters in tallyNames' order,
// the window from d's start and length, the pool from its sessions, the
// marks (the end lost with the server), and the terminals and sessions
// from its config.
func Figures(t testing.TB, d *result.Document) workload.Figures {
	t.Helper()
	start := d.StartedAt
	res := &driver.Result{Started: start, WindowStart: start,
		WindowEnd: start.Add(time.Duration(math.Round(d.WindowSeconds * float64(time.Second))))}
	for _, tx := range d.Transactions {
		res.Tx = append(res.Tx, driver.TxResult{Name: tx.Name, Count: tx.Count, Errors: tx.Errors, Retries: tx.Retries,
			ErrorSample: tx.ErrorSample, Hist: decode(t, tx.Histogram)})
	}
	if s := d.Sessions; s != nil {
		res.Pool = &driver.Pool{Terminals: s.Terminals, Sessions: s.Sessions, InUseMax: s.InUseMax, InUseP95: s.InUseP95,
			QueuedMax: s.QueuedMax, QueuedP95: s.QueuedP95, AllInUse: s.AllInUse, Wait: decode(t, s.WaitHistogram)}
	}
	f := workload.Figures{Config: d.Config, Result: res, Counters: d.Counters}
	if len(d.Marks) == 2 {
		f.Start, f.End = d.Marks[0].Reading(), d.Marks[1].Reading()
	}
	if d.ServerLost != nil {
		f.End = workload.Mark{Lost: true}
	}
	c := workload.ReadConfig(d.Config)
	f.Terminals, f.Sessions = c.Int("vus"), c.Int("vus")
	if _, pooled := d.Config["connections"]; pooled {
		f.Sessions = c.Int("connections")
	}
	if err := c.Err(); err != nil {
		t.Fatal(err)
	}
	return f
}

func decode(t testing.TB, s string) *hdrhistogram.Histogram {
	t.Helper()
	h, err := latency.Decode(s)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// Resummarizes checks that w makes again, from document d's figures as
// written and read back, the metrics, summary lines, extra figures and
// audit that d holds.
func Resummarizes(t testing.TB, w workload.Resummarizer, d *result.Document) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "run.json")
	if err := result.Write(path, d); err != nil {
		t.Fatal(err)
	}
	d, err := result.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := w.Resummarize(Figures(t, d))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range d.Metrics {
		v := s.Values[m.Key]
		if !samePtr(v.DB, m.DB) || !samePtr(v.Client, m.Client) {
			t.Errorf("%s: resummarized db %v, client %v; the document holds db %v, client %v", m.Key, show(v.DB), show(v.Client), show(m.DB), show(m.Client))
		}
	}
	if !slices.Equal(s.Lines, d.Lines) {
		t.Errorf("resummarized lines\n%q\nthe document holds\n%q", s.Lines, d.Lines)
	}
	var audit []result.AuditItem
	for _, a := range s.Audit {
		audit = append(audit, result.AuditItem(a))
	}
	if !slices.Equal(audit, d.Audit) {
		t.Errorf("resummarized audit %+v, the document holds %+v", audit, d.Audit)
	}
	got, err1 := asRead(s.Extra)
	want, err2 := json.Marshal(d.Extra)
	if err1 != nil || err2 != nil || string(got) != string(want) {
		t.Errorf("resummarized extra %s, the document holds %s (%v, %v)", got, want, err1, err2)
	}
}

// asRead is v's JSON as a document read back holds it: a struct's fields
// become a map's keys, which JSON writes sorted.
func asRead(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var read any
	if err := json.Unmarshal(b, &read); err != nil {
		return nil, err
	}
	return json.Marshal(read)
}

// samePtr says a and b are both unknown, or both the same figure.
func samePtr(a, b *float64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func show(p *float64) any {
	if p == nil {
		return "none"
	}
	return *p
}

// Reseeds checks a Seeded run: three runs opened apart, the first two
// reseeded to one seed, have the same config and their terminals ids the
// same draws; the third, reseeded to the next seed, another config and
// other draws.
func Reseeds(t testing.TB, open func() (workload.Run, error), ids []int, draws func(r workload.Run, id int) []any) {
	t.Helper()
	const seed = 0x5eed
	var runs [3]workload.Run
	for i := range runs {
		r, err := open()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		runs[i] = r
	}
	for i, r := range runs {
		r.(workload.Seeded).Reseed(seed + uint64(i/2))
	}
	if s := runs[0].(workload.Seeded).Seed(); s != seed {
		t.Errorf("Seed() = %#x after Reseed(%#x)", s, seed)
	}
	if a, b := runs[0].Config(), runs[1].Config(); !reflect.DeepEqual(a, b) {
		t.Errorf("reseeded to one seed, configs\n%v\n%v", a, b)
	}
	if a, c := runs[0].Config(), runs[2].Config(); reflect.DeepEqual(a, c) {
		t.Errorf("reseeded to two seeds, one config %v", a)
	}
	for _, id := range ids {
		a, b, c := draws(runs[0], id), draws(runs[1], id), draws(runs[2], id)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("terminal %d: reseeded to one seed, it draws\n%v\n%v", id, a, b)
		}
		if reflect.DeepEqual(a, c) {
			t.Errorf("terminal %d: reseeded to two seeds, it draws the same %v", id, a)
		}
	}
}

package workload

import (
	"cmp"
	"context"
	"errors"
	"strings"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/spf13/pflag"
)

// Group is one workload of a mixed run, with its own virtual users.
type Group struct {
	W   Workload
	Run Run
	VUs int
}

// NoSchema is the error for a target that lacks w's schema: what to do.
func NoSchema(w Workload, t dbtarget.Target) error {
	return exitcode.Userf("no %s schema on %s: build it first with `dbrig build %s --target %s`", w.Name(), t.URL(), w.Name(), t.URL())
}

// OpenGroup opens workload name on t, with its default options, as a
// group of vus virtual users of a mixed run.
func OpenGroup(ctx context.Context, t dbtarget.Target, name string, vus int) (Group, error) {
	w, found := New(name)
	switch {
	case !found:
		return Group{}, exitcode.Userf("no workload %q to run with (known: %s)", name, strings.Join(Names(), ", "))
	case w.Info().FixedWork:
		return Group{}, exitcode.Userf("%s runs a fixed amount of work, not in a timed window: it cannot run with another", name)
	case vus < 1:
		return Group{}, exitcode.Userf("%s needs at least 1 virtual user, got %d", name, vus)
	}
	r, err := w.Open(ctx, t)
	if errors.Is(err, ErrNoSchema) {
		return Group{}, NoSchema(w, t)
	}
	return Group{W: w, Run: r, VUs: vus}, err
}

// Mixed drives several opened workloads at once on one target, over one
// measured window, each with its own virtual users, transaction types,
// counters, marks and metrics. To the driver and the runner it is one
// workload: its transaction types, tallies and metrics are the groups'
// one after another, the first group's as they are and the others'
// prefixed with their workload's name ("dvd-reports:completion_ms"). The
// first group's primary metric stands for the run.
type Mixed struct {
	groups []Group
	// base and tbase are where each group's transaction types and tallies
	// start; first where its virtual users do.
	base, tbase, first []int
}

var (
	_ Workload       = (*Mixed)(nil)
	_ Run            = (*Mixed)(nil)
	_ Rater          = (*Mixed)(nil)
	_ VULimiter      = (*Mixed)(nil)
	_ driver.VU      = (*mixedVU)(nil)
	_ driver.Flusher = (*mixedVU)(nil)
)

// NewMixed makes the mixed run of groups; the first is the main one.
func NewMixed(groups []Group) *Mixed {
	m := &Mixed{groups: groups}
	tx, tally, vus := 0, 0, 0
	for _, g := range groups {
		m.base, m.tbase, m.first = append(m.base, tx), append(m.tbase, tally), append(m.first, vus)
		tx += len(g.Run.TxNames())
		tally += len(g.Run.TallyNames())
		vus += g.VUs
	}
	return m
}

// VUs is every group's virtual users together.
func (m *Mixed) VUs() int {
	n := 0
	for _, g := range m.groups {
		n += g.VUs
	}
	return n
}

// prefix is what group i's names carry: nothing for the main group.
func (m *Mixed) prefix(i int) string {
	if i == 0 {
		return ""
	}
	return m.groups[i].W.Name() + ":"
}

func (m *Mixed) names(f func(Run) []string) []string {
	var out []string
	for i, g := range m.groups {
		for _, n := range f(g.Run) {
			out = append(out, m.prefix(i)+n)
		}
	}
	return out
}

func (m *Mixed) Name() string {
	names := make([]string, len(m.groups))
	for i, g := range m.groups {
		names[i] = g.W.Name()
	}
	return strings.Join(names, "+")
}

func (m *Mixed) Info() Info {
	ws := make([]Workload, len(m.groups))
	for i, g := range m.groups {
		ws[i] = g.W
	}
	return MixInfo(ws)
}

// MixInfo is what a mixed run of ws declares: the first's metrics as
// they are, then each other's with its name before its key and label; the
// first's primary metric and transaction stand for the run.
func MixInfo(ws []Workload) Info {
	info := ws[0].Info()
	for _, w := range ws[1:] {
		for _, met := range w.Info().Metrics {
			met.Key = w.Name() + ":" + met.Key
			met.Label = w.Name() + " " + met.Label
			info.Metrics = append(info.Metrics, met)
		}
	}
	return info
}

// RunFlags: the groups' runs are already opened with their options.
func (m *Mixed) RunFlags(*pflag.FlagSet) {}

func (m *Mixed) Open(context.Context, dbtarget.Target) (Run, error) { return m, nil }

func (m *Mixed) TxNames() []string    { return m.names(Run.TxNames) }
func (m *Mixed) TallyNames() []string { return m.names(Run.TallyNames) }

func (m *Mixed) NewVU(ctx context.Context, id int) (driver.VU, error) {
	i := len(m.first) - 1
	for id < m.first[i] {
		i--
	}
	g := m.groups[i]
	v, err := g.Run.NewVU(ctx, id-m.first[i])
	if err != nil {
		return nil, err
	}
	return &mixedVU{VU: v, base: m.base[i], tbase: m.tbase[i], tallies: len(g.Run.TallyNames())}, nil
}

// CheckVUs asks each group that limits its virtual users about its own.
func (m *Mixed) CheckVUs(int) error {
	for _, g := range m.groups {
		if err := CheckVUs(g.Run, g.VUs); err != nil {
			return err
		}
	}
	return nil
}

func (m *Mixed) Config() map[string]any {
	cfg := m.groups[0].Run.Config()
	for i, g := range m.groups[1:] {
		c := g.Run.Config()
		c["vus"] = g.VUs
		cfg[m.groups[i+1].W.Name()] = c
	}
	return cfg
}

// Mark reads each group's marks, the others' keys prefixed.
func (m *Mixed) Mark(ctx context.Context) (Mark, error) {
	all := Mark{Values: map[string]int64{}}
	for i, g := range m.groups {
		mk, err := g.Run.Mark(ctx)
		if err != nil {
			return all, err
		}
		for k, v := range mk.Values {
			all.Values[m.prefix(i)+k] = v
		}
		// One target: every group's mark was read on the same server.
		all.Server = cmp.Or(all.Server, mk.Server)
	}
	return all, nil
}

// marks is group i's share of a mark.
func (m *Mixed) marks(i int, all Mark) Mark {
	out := Mark{At: all.At, Values: map[string]int64{}, Lost: all.Lost, Unread: all.Unread, Shared: len(m.groups) > 1, Server: all.Server}
	p := m.prefix(i)
	for k, v := range all.Values {
		if i == 0 && !m.ownedByOther(k) || i > 0 && strings.HasPrefix(k, p) {
			out.Values[strings.TrimPrefix(k, p)] = v
		}
	}
	return out
}

func (m *Mixed) ownedByOther(key string) bool {
	for i := 1; i < len(m.groups); i++ {
		if strings.HasPrefix(key, m.prefix(i)) {
			return true
		}
	}
	return false
}

// share is group i's part of the driver's result.
func (m *Mixed) share(i int, res *driver.Result) *driver.Result {
	g := m.groups[i]
	n, t := len(g.Run.TxNames()), len(g.Run.TallyNames())
	out := *res
	out.Tx = res.Tx[m.base[i] : m.base[i]+n]
	out.Tally = res.Tally[m.tbase[i] : m.tbase[i]+t]
	out.Series = make([]driver.Point, len(res.Series))
	for k, p := range res.Series {
		p.Counts = p.Counts[m.base[i] : m.base[i]+n]
		out.Series[k] = p
	}
	return &out
}

func (m *Mixed) Summarize(res *driver.Result, start, end Mark) Summary {
	sum := Summary{Values: map[string]Value{}}
	for i, g := range m.groups {
		if g.VUs == 0 {
			// It did not run: its metrics were not measured, not zero.
			sum.Lines = append(sum.Lines, g.W.Name()+": no virtual users; the others ran alone")
			continue
		}
		s := g.Run.Summarize(m.share(i, res), m.marks(i, start), m.marks(i, end))
		for k, v := range s.Values {
			sum.Values[m.prefix(i)+k] = v
		}
		for _, l := range s.Lines {
			if i > 0 {
				l = g.W.Name() + ": " + l
			}
			sum.Lines = append(sum.Lines, l)
		}
		for _, a := range s.Audit {
			a.Name = m.prefix(i) + a.Name
			sum.Audit = append(sum.Audit, a)
		}
		for k, v := range s.Extra {
			if sum.Extra == nil {
				sum.Extra = map[string]any{}
			}
			sum.Extra[m.prefix(i)+k] = v
		}
	}
	return sum
}

func (m *Mixed) Progress(counts []int64) string {
	parts := make([]string, len(m.groups))
	for i, g := range m.groups {
		parts[i] = m.prefix(i) + g.Run.Progress(counts[m.base[i]:m.base[i]+len(g.Run.TxNames())])
	}
	return strings.Join(parts, "  ")
}

// Rates are the groups' that have them.
func (m *Mixed) Rates(counts []int64) map[string]float64 {
	out := map[string]float64{}
	for i, g := range m.groups {
		if r, ok := g.Run.(Rater); ok {
			for k, v := range r.Rates(counts[m.base[i] : m.base[i]+len(g.Run.TxNames())]) {
				out[m.prefix(i)+k] = v
			}
		}
	}
	return out
}

// Close closes nothing: each group's run is its opener's to close (the run
// command and a sweep's point close every run they opened, whether or not
// a Mixed came of them), and closing it here too would close it twice.
func (m *Mixed) Close() error { return nil }

// mixedVU is a group's virtual user, its transaction types and tallies
// moved to where the group's start.
type mixedVU struct {
	driver.VU
	base, tbase, tallies int
}

func (v *mixedVU) Next() int { return v.base + v.VU.Next() }

func (v *mixedVU) Run(ctx context.Context, tx int, t driver.Tally) error {
	return v.VU.Run(ctx, tx-v.base, t[v.tbase:v.tbase+v.tallies])
}

func (v *mixedVU) Flush(ctx context.Context) error {
	if f, ok := v.VU.(driver.Flusher); ok {
		return f.Flush(ctx)
	}
	return nil
}

func (v *mixedVU) Pacing(tx int) (before, after time.Duration) {
	if p, ok := v.VU.(driver.Pacer); ok {
		return p.Pacing(tx - v.base)
	}
	return 0, 0
}

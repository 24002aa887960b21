package telemetry

import (
	"cmp"
	"slices"
	"strings"
)

// Summary is a recording over its measured window only: time-weighted
// means of the host's samples, the database's counters as totals and
// rates, and the sampled sessions' waits.
type Summary struct {
	Seconds float64
	// Host is nil when the recording has no host samples in the window.
	Host *HostSummary
	// DB is nil when it has no database counters at both edges.
	DB *DBSummary
	// Waits are the sampled sessions by class/event, most seen first.
	Waits []Wait
	// Categories are the foreground's shares (%) of database time by
	// wait category (WaitCPU, WaitRead...); nil where the recording
	// names none.
	Categories map[string]float64
	// ActiveSessions is the average number of active sessions.
	ActiveSessions float64
	// TopQueries are query ids by sightings, most seen first.
	TopQueries []Wait
	// Background are the server's own processes by kind and class/event,
	// most seen first: not database time, and apart from Waits.
	Background []BackgroundWait
	// Replicas are the replicas read in the window, by name.
	Replicas []ReplicaSummary
	// Members are a multi-master cluster's nodes read in the window, by
	// name.
	Members []MemberSummary
}

// BackgroundWait is one kind of the server's own processes in one
// class/event.
type BackgroundWait struct {
	Backend string
	// Wait's Pct is the share of the sampler's readings that saw such a
	// process there (100 = one of them all the time), as AAS is its
	// average number; neither is a share of database time.
	Wait
}

// HostSummary is the host over the window.
type HostSummary struct {
	CPU    CPUTimes
	PerCPU []CPUTimes
	Client float64
	Server *float64
	// Nodes are the nodes of the server the run was on, by name, each
	// one's mean over the window; none for a server of its own.
	Nodes []NodeCPU
	// ClientWait is the client's run-queue wait (HostSample.ClientWait)
	// over the samples that have it; nil where none has.
	ClientWait *float64
	// ServerWait is the server's (HostSample.ServerWait), the same way.
	ServerWait *float64
	// AvgMHz and BusyMHz are by CPU, nil without a frequency source.
	AvgMHz, BusyMHz []float64
	CStates         [][]float64
	Disks           []DiskRates
	// Data is the disk that holds the database, or else the busiest one;
	// nil when there is none.
	Data            *DiskRates
	ContextSwitches float64
	// PeakServerCgroup is the highest memory use of a confined server.
	PeakServerCgroup int64
	LastMemory       Memory
}

// DBSummary is the database's counters over the window.
type DBSummary struct {
	// Deltas are the counters' growth over the window; Rates are per second.
	Deltas, Rates map[string]float64
	// Gauges are the values at the window's end (database_bytes...).
	Gauges map[string]float64
	// HitPct is the share of logical reads the cache served, nil when the
	// database counts neither.
	HitPct *float64
}

// Wait is one class/event (or query id) of the sampled sessions.
type Wait struct {
	Name string
	// Count is how often a session was seen in it; Pct its share of all
	// sightings, which is the share of database time; AAS the average
	// number of sessions in it.
	Count int
	Pct   float64
	AAS   float64
	// Category is the wait's category, where the recording names it.
	Category string
}

// Class is the part of a wait's name before the slash ("IO" of "IO/DataFileRead").
func (w Wait) Class() string {
	c, _, _ := strings.Cut(w.Name, "/")
	return c
}

// CPUClass is the wait class of a session on CPU, waiting on nothing.
const CPUClass = "CPU"

// gauges are the counters that are levels, not totals.
var gauges = map[string]bool{DatabaseBytes: true}

// InWindow tells whether a sample ending at t belongs to the window. The
// edges are samples of their own, so the sample at the start edge covers
// time before it and is out.
func (r *Recording) InWindow(t float64) bool {
	const eps = 1e-9
	return t > r.Window[0]+eps && t <= r.Window[1]+eps
}

// Summarize reduces r to its measured window.
func Summarize(r *Recording) Summary {
	s := Summary{Seconds: r.Window[1] - r.Window[0]}
	if r.Host != nil {
		s.Host = r.hostSummary()
	}
	if r.DB != nil {
		s.DB = r.dbSummary()
		r.sessionSummary(&s)
		s.Replicas = r.replicaSummary()
		s.Members = r.memberSummary()
	}
	return s
}

func (r *Recording) hostSummary() *HostSummary {
	var in []HostSample
	for _, hs := range r.Host.Samples {
		if r.InWindow(hs.T) {
			in = append(in, hs)
		}
	}
	if len(in) == 0 {
		return nil
	}
	h := &HostSummary{}
	var total float64
	for _, hs := range in {
		total += hs.DT
	}
	w := func(hs HostSample) float64 { return hs.DT / total }
	var serverSeen bool
	var server float64
	var clientWait, serverWait waited
	for _, hs := range in {
		h.CPU = addTimes(h.CPU, hs.CPU, w(hs))
		h.PerCPU = addTimesEach(h.PerCPU, hs.PerCPU, w(hs))
		h.Client += hs.Client * w(hs)
		if hs.Server != nil {
			serverSeen = true
			server += *hs.Server * w(hs)
		}
		clientWait.add(hs.ClientWait, hs.DT)
		serverWait.add(hs.ServerWait, hs.DT)
		h.ContextSwitches += hs.ContextSwitches * w(hs)
		h.PeakServerCgroup = max(h.PeakServerCgroup, hs.Memory.ServerCgroup)
		h.LastMemory = hs.Memory
	}
	if serverSeen {
		h.Server = &server
	}
	h.ClientWait, h.ServerWait = clientWait.mean(), serverWait.mean()
	h.Nodes = nodeCPU(in, total)
	h.AvgMHz, h.BusyMHz = frequencies(in, total)
	h.CStates = cstates(in, total)
	h.Disks = disks(in, total)
	h.Data = dataDisk(h.Disks, r.Host.Facts.DataDevice)
	return h
}

// waited is a run-queue wait's mean over the samples that have it.
type waited struct{ sum, dt float64 }

func (w *waited) add(pct *float64, dt float64) {
	if pct != nil {
		w.sum += *pct * dt
		w.dt += dt
	}
}

// mean is nil where no sample had the wait.
func (w waited) mean() *float64 {
	if w.dt == 0 {
		return nil
	}
	m := w.sum / w.dt
	return &m
}

func addTimes(a, b CPUTimes, w float64) CPUTimes {
	return CPUTimes{
		User: a.User + b.User*w, System: a.System + b.System*w, IOWait: a.IOWait + b.IOWait*w,
		IRQ: a.IRQ + b.IRQ*w, Steal: a.Steal + b.Steal*w, Idle: a.Idle + b.Idle*w,
	}
}

func addTimesEach(acc, b []CPUTimes, w float64) []CPUTimes {
	if len(acc) < len(b) {
		acc = append(acc, make([]CPUTimes, len(b)-len(acc))...)
	}
	for i := range b {
		acc[i] = addTimes(acc[i], b[i], w)
	}
	return acc
}

// frequencies are the window's mean clocks by CPU: Avg_MHz weighted by
// time, Bzy_MHz by busy time, as turbostat's ratios of counter deltas
// would give.
func frequencies(in []HostSample, total float64) (avg, busy []float64) {
	var busyTime []float64
	for _, hs := range in {
		for i, mhz := range hs.AvgMHz {
			if len(avg) <= i {
				avg, busy, busyTime = append(avg, 0), append(busy, 0), append(busyTime, 0)
			}
			avg[i] += mhz * hs.DT / total
			if i < len(hs.BusyMHz) && i < len(hs.PerCPU) {
				bt := hs.PerCPU[i].Busy() * hs.DT
				busy[i] += hs.BusyMHz[i] * bt
				busyTime[i] += bt
			}
		}
	}
	if avg == nil {
		return nil, nil
	}
	anyBusy := false
	for i := range busy {
		if busyTime[i] > 0 {
			busy[i] /= busyTime[i]
			anyBusy = true
		}
	}
	if !anyBusy {
		busy = nil
	}
	return avg, busy
}

func cstates(in []HostSample, total float64) [][]float64 {
	var out [][]float64
	for _, hs := range in {
		for i, states := range hs.CStates {
			if len(out) <= i {
				out = append(out, make([]float64, len(states)))
			}
			for j, pct := range states {
				if j < len(out[i]) {
					out[i][j] += pct * hs.DT / total
				}
			}
		}
	}
	return out
}

// disks are the devices' time-weighted means; await is weighted by the
// IOs it averages over, as iostat's would be over the whole window.
func disks(in []HostSample, total float64) []DiskRates {
	idx := map[string]int{}
	var out []DiskRates
	var rWait, wWait []float64
	for _, hs := range in {
		w := hs.DT / total
		for _, d := range hs.Disks {
			i, ok := idx[d.Device]
			if !ok {
				i = len(out)
				idx[d.Device] = i
				out = append(out, DiskRates{Device: d.Device})
				rWait, wWait = append(rWait, 0), append(wWait, 0)
			}
			o := &out[i]
			o.ReadIOPS += d.ReadIOPS * w
			o.WriteIOPS += d.WriteIOPS * w
			o.ReadMBps += d.ReadMBps * w
			o.WriteMBps += d.WriteMBps * w
			o.UtilPct += d.UtilPct * w
			rWait[i] += d.ReadAwaitMs * d.ReadIOPS * hs.DT
			wWait[i] += d.WriteAwaitMs * d.WriteIOPS * hs.DT
		}
	}
	for i := range out {
		if n := out[i].ReadIOPS * total; n > 0 {
			out[i].ReadAwaitMs = rWait[i] / n
		}
		if n := out[i].WriteIOPS * total; n > 0 {
			out[i].WriteAwaitMs = wWait[i] / n
		}
	}
	return out
}

func dataDisk(ds []DiskRates, device string) *DiskRates {
	var best *DiskRates
	for i := range ds {
		d := &ds[i]
		if d.Device == device {
			return d
		}
		if best == nil || d.ReadIOPS+d.WriteIOPS > best.ReadIOPS+best.WriteIOPS {
			best = d
		}
	}
	return best
}

// edgeSamples are the indexes of the counter readings at the window's
// start and end: the last at or before each edge, -1 where none is.
func (r *Recording) edgeSamples() (start, end int) {
	const eps = 1e-9
	start, end = -1, -1
	for i, s := range r.DB.Samples {
		if s.T <= r.Window[0]+eps {
			start = i
		}
		if s.T <= r.Window[1]+eps {
			end = i
		}
	}
	return start, end
}

// growth is counter k's growth from sample i to sample j, summed over the
// samples between them. A counter that went backwards was reset (a server
// restarted after a crash forgets its statistics) and grew from zero
// since; what it counted between the sample before and the crash is lost.
func (r *Recording) growth(k string, i, j int) (float64, bool) {
	prev, ok := r.DB.Samples[i].Counters[k]
	if !ok {
		return 0, false
	}
	var sum float64
	for _, s := range r.DB.Samples[i+1 : j+1] {
		v, ok := s.Counters[k]
		switch {
		case !ok:
			continue
		case v < prev:
			sum += v
		default:
			sum += v - prev
		}
		prev = v
	}
	return sum, true
}

func (r *Recording) dbSummary() *DBSummary {
	i, j := r.edgeSamples()
	if i < 0 || j <= i {
		return nil
	}
	start, end := &r.DB.Samples[i], &r.DB.Samples[j]
	secs := end.T - start.T
	d := &DBSummary{Deltas: map[string]float64{}, Rates: map[string]float64{}, Gauges: map[string]float64{}}
	for k, v := range end.Counters {
		if gauges[k] {
			d.Gauges[k] = v
			continue
		}
		delta, ok := r.growth(k, i, j)
		if !ok {
			continue
		}
		d.Deltas[k] = delta
		if secs > 0 {
			d.Rates[k] = delta / secs
		}
	}
	logical, okL := d.Deltas[LogicalReads]
	physical, okP := d.Deltas[PhysicalReads]
	if okL && okP && logical > 0 {
		hit := 100 * (logical - physical) / logical
		d.HitPct = &hit
	}
	return d
}

func (r *Recording) sessionSummary(s *Summary) {
	if r.DB.Sessions == nil {
		return
	}
	counts, queries, background := map[string]int{}, map[string]int{}, map[string]int{}
	samples, seen := 0, 0
	for _, b := range r.DB.Sessions.Buckets {
		if !r.InWindow(b.T) {
			continue
		}
		samples += b.Samples
		for k, n := range b.Counts {
			counts[k] += n
			seen += n
		}
		for k, n := range b.Queries {
			queries[k] += n
		}
		for kind, events := range b.Background {
			for k, n := range events {
				background[kind+"\x00"+k] += n
			}
		}
	}
	if samples == 0 {
		return
	}
	s.ActiveSessions = float64(seen) / float64(samples)
	s.Waits = ranked(counts, seen, samples)
	if cats := r.DB.Sessions.Categories; len(cats) > 0 {
		s.Categories = map[string]float64{}
		for i, w := range s.Waits {
			c := cmp.Or(cats[w.Name], WaitOther)
			s.Waits[i].Category = c
			s.Categories[c] += w.Pct
		}
	}
	s.TopQueries = ranked(queries, seen, samples)
	for _, w := range ranked(background, samples, samples) {
		kind, name, _ := strings.Cut(w.Name, "\x00")
		w.Name = name
		s.Background = append(s.Background, BackgroundWait{Backend: kind, Wait: w})
	}
}

func ranked(counts map[string]int, seen, samples int) []Wait {
	out := make([]Wait, 0, len(counts))
	for k, n := range counts {
		out = append(out, Wait{Name: k, Count: n, Pct: 100 * float64(n) / float64(seen), AAS: float64(n) / float64(samples)})
	}
	slices.SortFunc(out, func(a, b Wait) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Name, b.Name))
	})
	return out
}

// Explain is a figure a sweep keeps per point to explain it.
type Explain struct {
	Key, Label, Unit string
	// Classic marks the figures the classic studies explained their
	// gains with, which a sweep's table of points shows beside the gain.
	Classic bool
	Value   func(Summary) (float64, bool)
}

// rate is a database counter's rate over the window, where it was read.
func rate(key string) func(Summary) (float64, bool) {
	return func(s Summary) (float64, bool) {
		if s.DB == nil {
			return 0, false
		}
		v, ok := s.DB.Rates[key]
		return v, ok
	}
}

// Cores is how many CPUs the host has and how many of them, on average,
// the server's processes kept busy (HostSummary.ServerCPU; 0 where they
// are not known).
func (s Summary) Cores() (host, serverBusy float64) {
	if s.Host == nil {
		return 0, 0
	}
	host = float64(len(s.Host.PerCPU))
	pct, _ := s.Host.ServerCPU()
	return host, pct * host / 100
}

// perCore is a database counter's rate divided by the host's CPUs, as the
// SLOB method states IOPS, or by the CPUs the server kept busy.
func perCore(key string, busy bool) func(Summary) (float64, bool) {
	return func(s Summary) (float64, bool) {
		v, ok := rate(key)(s)
		host, server := s.Cores()
		cores := host
		if busy {
			cores = server
		}
		if !ok || cores <= 0 {
			return 0, false
		}
		return v / cores, true
	}
}

// Explains are the figures a sweep keeps per point, in order.
var Explains = []Explain{
	{"cpu_busy_pct", "CPU busy", "%", true, func(s Summary) (float64, bool) {
		if s.Host == nil {
			return 0, false
		}
		return s.Host.CPU.Busy(), true
	}},
	{"read_iops", "disk reads/s", "", true, func(s Summary) (float64, bool) {
		if s.Host == nil || s.Host.Data == nil {
			return 0, false
		}
		return s.Host.Data.ReadIOPS, true
	}},
	{"read_await_ms", "read latency", "ms", true, func(s Summary) (float64, bool) {
		if s.Host == nil || s.Host.Data == nil || s.Host.Data.ReadIOPS == 0 {
			return 0, false
		}
		return s.Host.Data.ReadAwaitMs, true
	}},
	{"physical_reads_per_s", "cache misses/s", "", true, rate(PhysicalReads)},
	{"hit_pct", "cache hit", "%", true, func(s Summary) (float64, bool) {
		if s.DB == nil || s.DB.HitPct == nil {
			return 0, false
		}
		return *s.DB.HitPct, true
	}},
	{"logical_reads_per_s", "logical reads/s", "", false, rate(LogicalReads)},
	{"physical_reads_per_core", "cache misses/s per core", "", false, perCore(PhysicalReads, false)},
	{"physical_reads_per_server_core", "cache misses/s per busy server core", "", false, perCore(PhysicalReads, true)},
	{"logical_reads_per_core", "logical reads/s per core", "", false, perCore(LogicalReads, false)},
	{"block_writes_per_s", "block writes/s", "", false, rate(BlockWrites)},
	{"wal_bytes_per_s", "WAL", "bytes/s", false, rate(WALBytes)},
	{"commits_per_s", "commits/s", "", false, rate(Commits)},
	{"client_pct", "client CPU", "%", false, func(s Summary) (float64, bool) {
		if s.Host == nil {
			return 0, false
		}
		return s.Host.Client, true
	}},
	{"server_pct", "server CPU", "%", false, func(s Summary) (float64, bool) {
		if s.Host == nil {
			return 0, false
		}
		return s.Host.ServerCPU()
	}},
	{"active_sessions", "active sessions", "", false, func(s Summary) (float64, bool) {
		return s.ActiveSessions, len(s.Waits) > 0
	}},
	{"db_cpu_pct", "DB time on CPU", "%", false, func(s Summary) (float64, bool) {
		pct := 0.0
		for _, w := range s.Waits {
			if w.Class() == CPUClass {
				pct += w.Pct
			}
		}
		return pct, len(s.Waits) > 0
	}},
}

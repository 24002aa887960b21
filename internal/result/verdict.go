package result

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/dbrig/dbrig/internal/human"
	"github.com/dbrig/dbrig/internal/telemetry"
)

// The verdict on what limited a run, drawn from its own figures as the
// classic studies drew theirs by hand: each resource that can bound a
// run is scored by how near its ceiling the run took it, 1 being at it.
//   - A CPU's ceiling is 90% of the CPUs its user may run on: the client's
//     (--client-cpus, or the host's) and the server's (its cpuset, or the
//     host's). CPUs 90% busy, whoever kept them so, are the ceiling of a
//     user that used half of what it may use or more.
//   - A wait's ceiling is 30% of database time: sessions spending a third
//     of their time on one thing are held by it. Storage takes the waits on
//     data reads and writes that reached the data disk; the page cache
//     those the OS served, by the disk's reads against the cache misses.
//     Replication takes the commits' waits for their replicas, and is
//     judged only on a server that has some.
//   - Think time's ceiling is half of the virtual users' time spent
//     between transactions, where the workload paces them.
//   - Too few sessions is what is left when no resource came within 75%
//     of its ceiling while every virtual user was busy, or when a pool's sessions
//     were all lent and terminals queued for them.
//
// A verdict is computed when a document is read, so that older documents
// get one too; where the data cannot tell, it says what is missing.

// Limit kinds.
const (
	LimitClientCPU   = "client CPU"
	LimitServerCPU   = "server CPU"
	LimitStorage     = "storage"
	LimitPageCache   = "page cache"
	LimitLocks       = "locks"
	LimitCommit      = "commit"
	LimitReplication = "replication" // commits held until their replicas confirmed them
	LimitThink       = "think time"
	LimitSessions    = "too few sessions"
)

// Limit is one thing that may have limited a run: how near its ceiling
// the run took it (Score, 1 = at it) and the figures that say so.
type Limit struct {
	Kind  string  `json:"kind"`
	Score float64 `json:"score"`
	Why   string  `json:"why"`
}

// Verdict ranks what limited a run. Limits are those at their ceiling,
// the most first; Below the others judged, nearest first; Unknown says
// what the run's data could not tell.
type Verdict struct {
	Limits  []Limit  `json:"limits"`
	Below   []Limit  `json:"below,omitempty"`
	Unknown []string `json:"unknown,omitempty"`
	// Notes are caveats on the whole verdict.
	Notes []string `json:"notes,omitempty"`
}

// Ceilings, as the comment at the top says.
const (
	cpuCeiling   = 0.9
	waitCeiling  = 30.0
	thinkCeiling = 0.5
	// spareBelow is how near its ceiling the nearest resource may come
	// for the run to be held by its sessions instead.
	spareBelow = 0.75
	// engineUnknown is the share (%) of database time in the engine,
	// unsplit into CPU and waits, from which the data waits cannot be
	// judged in full.
	engineUnknown = 10.0
)

// VerdictOf judges d from its telemetry and its transactions; nil for a
// document with no measured window.
func VerdictOf(d *Document) *Verdict {
	if d.WindowSeconds <= 0 {
		return nil
	}
	v := &Verdict{}
	var s telemetry.Summary
	if d.Telemetry != nil {
		s = telemetry.Summarize(d.Telemetry)
	}
	cpu := cpuLimits(d, s, v)
	waits := waitLimits(d, s, v)
	busy, think, queued := vuTime(d)
	all := append(append(cpu, waits...), conflictLimits(d, s)...)
	// Think time is judged where the virtual users spent a tenth of its
	// ceiling between transactions, and the client had CPU to spare: a
	// saturated client's users wait between transactions for the CPU.
	if think != nil && think.Score >= 0.1 && (len(cpu) == 0 || cpu[0].Kind != LimitClientCPU || cpu[0].Score < 1) {
		all = append(all, *think)
	}
	if l := sessionLimit(d, s, all, busy, queued); l != nil {
		all = append(all, *l)
	}
	slices.SortStableFunc(all, func(a, b Limit) int { return cmp.Compare(b.Score, a.Score) })
	for _, l := range all {
		if l.Score >= 1 {
			v.Limits = append(v.Limits, l)
		} else {
			v.Below = append(v.Below, l)
		}
	}
	// A CPU at its ceiling comes first: under it every wait stretches,
	// as the process that would end a wait itself waits to run.
	slices.SortStableFunc(v.Limits, func(a, b Limit) int { return cmp.Compare(cpuRank(a), cpuRank(b)) })
	replicationFirst(v)
	return v
}

// replicationFirst puts commits held for their replicas ahead of the lock
// waits where both limited the run: a transaction keeps its locks until
// its commit returns, so every wait for the replicas is also a wait of
// the transactions queued on its rows (a few hot rows every writer
// updates).
func replicationFirst(v *Verdict) {
	kinds := func(kind string) func(Limit) bool { return func(l Limit) bool { return l.Kind == kind } }
	r, l := slices.IndexFunc(v.Limits, kinds(LimitReplication)), slices.IndexFunc(v.Limits, kinds(LimitLocks))
	if r < 0 || l < 0 {
		return
	}
	if r > l {
		repl := v.Limits[r]
		v.Limits = slices.Insert(slices.Delete(v.Limits, r, r+1), l, repl)
	}
	v.Notes = append(v.Notes, "a transaction keeps its locks until its commit returns, so the lock waits grew with the commits' waits for their replicas")
}

// cpuRank is 0 for a CPU's limit, 1 for the others.
func cpuRank(l Limit) int {
	if l.Kind == LimitClientCPU || l.Kind == LimitServerCPU {
		return 0
	}
	return 1
}

// cpuLimits scores the client's and the server's CPUs.
func cpuLimits(d *Document, s telemetry.Summary, v *Verdict) []Limit {
	if s.Host == nil {
		v.Unknown = append(v.Unknown, "the CPUs: no host telemetry was recorded")
		return nil
	}
	f := d.Telemetry.Host.Facts
	host := float64(max(f.OnlineCPUs, len(s.Host.PerCPU), d.Host.CPUs, 1))
	clientCap := host
	if n := len(cpuset(f.ClientCPUs)); n > 0 {
		clientCap = float64(n)
	}
	if n := ConfigInt(d.Config, "client_cpus"); n > 0 {
		clientCap = min(clientCap, float64(n))
	}
	client := s.Host.Client * host / 100
	cl := cpuLimit(s, LimitClientCPU, client, clientCap, f.ClientCPUs,
		fmt.Sprintf("the client used %.2f of the %s it may use", client, cpus(clientCap)))
	if f.Embedded {
		cl.Why = fmt.Sprintf("the client, with the database engine inside it, used %.2f of the %s its runtime may run on at once", client, cpus(clientCap))
	}
	addWait(&cl, s, s.Host.ClientWait, host, client, clientCap, f.ClientCPUs, "threads", true)
	out := []Limit{cl}
	server := serverCores(s, host)
	nodes := s.Host.Nodes
	if _, ok := s.Host.ServerCPU(); ok && !f.Embedded {
		serverCap := host
		if n := len(cpuset(f.ServerCPUs)); n > 0 {
			serverCap = float64(n)
		}
		why := fmt.Sprintf("the server kept %.2f of its %s busy", server, cpus(serverCap))
		if len(nodes) > 0 {
			why = nodesWhy(f, nodes, host, server, serverCap)
		}
		sl := cpuLimit(s, LimitServerCPU, server, serverCap, f.ServerCPUs, why)
		addWait(&sl, s, s.Host.ServerWait, host, server, serverCap, f.ServerCPUs, "processes", false)
		if cpu, ok := s.Categories[telemetry.WaitCPU]; ok {
			sl.Why += fmt.Sprintf("; its sessions were on CPU %.0f%% of database time", cpu)
		}
		out = append(out, sl)
	}
	busy := s.Host.CPU.Busy()
	if others := busy/100*host - client - server; others >= 0.25*host {
		which := "the server"
		if len(nodes) > 0 {
			which = "the cluster's nodes"
		}
		v.Notes = append(v.Notes, fmt.Sprintf("other processes than the client and %s kept %.2f of the host's %.0f CPUs busy: the run shared the host, and its figures may not repeat", which, others, host))
	}
	for i := range out {
		out[i].Why += fmt.Sprintf("; the host's %.0f CPUs were %.0f%% busy", host, busy)
	}
	return out
}

// addWait lifts l, the limit of a user of used CPUs out of the capacity
// it may use on the CPUs of set, by what its threads or processes waited
// in the run queue (w, in percent of the host's CPUs): what it wanted is
// what it used and what it waited for, as a user held to its CPUs, or
// sharing them with other work, wanted them all even where it used less.
// Only for a user whose CPUs were at their ceiling, or, with byUse, of
// half its capacity or more: threads that wake often wait a little for a
// CPU even on an idle host (a wake-up waits for the CPU its waker is on),
// which a user with CPU to spare does not want; but on CPUs 90% busy the
// wait is for CPU there was not (other processes kept one client to 0.36
// of its CPU, its host 95% busy, and a server confined to one CPU to 0.48
// of it). A server's processes wake far more often than a client's
// threads (each commit's wait for the WAL writer, the writer's for work),
// so for it use alone is not enough: four backends that kept 1.32 of two
// CPUs busy, on a host 69% busy, waited 1.35 s a second, commits the run's
// limit. The wait lifts the score to at most all the capacity: past it
// the wait says no more than use does.
func addWait(l *Limit, s telemetry.Summary, w *float64, host, used, capacity float64, set, who string, byUse bool) {
	if w == nil || *w <= 0 || (!(byUse && used >= capacity/2) && busyOn(s, set)/100 < cpuCeiling) {
		return
	}
	wait := *w * host / 100
	l.Score = max(l.Score, min(used+wait, capacity)/(cpuCeiling*capacity))
	l.Why += fmt.Sprintf(", and its %s waited %.2f s a second more for a CPU", who, wait)
}

// cpuLimit scores a user of used CPUs out of the capacity it may use, on
// the CPUs of set (any, when empty). CPUs at least 90% busy are its
// ceiling too, whoever kept them busy, where it used half its capacity
// or more: it wanted CPU they did not have. A user that used little of
// its capacity on busy CPUs was held by something else.
func cpuLimit(s telemetry.Summary, kind string, used, capacity float64, set, why string) Limit {
	l := Limit{Kind: kind, Score: used / (cpuCeiling * capacity), Why: why}
	if used >= capacity/2 {
		l.Score = max(l.Score, busyOn(s, set)/100/cpuCeiling)
	}
	return l
}

// busyOn is how busy (%) the CPUs of set were, all of the host's when
// set is empty or names CPUs the recording has none of.
func busyOn(s telemetry.Summary, set string) float64 {
	var sum float64
	n := 0
	for _, c := range cpuset(set) {
		if c < len(s.Host.PerCPU) {
			sum += s.Host.PerCPU[c].Busy()
			n++
		}
	}
	if n == 0 {
		return s.Host.CPU.Busy()
	}
	return sum / float64(n)
}

// serverCores is how many CPUs the server's processes kept busy
// (HostSummary.ServerCPU: on a server of several nodes, theirs on this
// host together, a replica's replay being the server's work, not another
// process's); 0 where unknown.
func serverCores(s telemetry.Summary, host float64) float64 {
	pct, _ := s.Host.ServerCPU()
	return pct * host / 100
}

// nodesWhy is the server's CPU on a server of several nodes: theirs
// together, then each one's share, and how many of them ran elsewhere,
// where the host's figures miss them.
func nodesWhy(f telemetry.HostFacts, nodes []telemetry.NodeCPU, host, server, capacity float64) string {
	each := make([]string, len(nodes))
	for i, n := range nodes {
		each[i] = fmt.Sprintf("%s %.2f", n.Name, n.Pct*host/100)
	}
	which := "the cluster's " + human.Count(len(nodes), "node")
	if away := elsewhere(f.Nodes, nodes); away > 0 {
		which += fmt.Sprintf(" on this host (and %d elsewhere)", away)
	}
	return fmt.Sprintf("%s kept %.2f of the %s busy: %s", which, server, cpus(capacity), strings.Join(each, ", "))
}

// elsewhere counts the nodes the run found at its start that were not on
// this host, nor read on it since.
func elsewhere(found []telemetry.Node, read []telemetry.NodeCPU) int {
	n := 0
	for _, f := range found {
		if f.PID == 0 && !slices.ContainsFunc(read, func(r telemetry.NodeCPU) bool { return r.Name == f.Name }) {
			n++
		}
	}
	return n
}

// waitLimits scores what the database's sessions waited on, by category.
func waitLimits(d *Document, s telemetry.Summary, v *Verdict) []Limit {
	if s.Categories == nil {
		why := "the database's sessions' waits were not sampled"
		switch rec := d.Telemetry; {
		case rec != nil && rec.DB != nil && rec.DB.Sessions != nil && len(s.Waits) > 0:
			why = "the waits were recorded before dbrig sorted them into categories"
		case rec != nil && rec.DB != nil && rec.DB.Sessions == nil:
			why = "the database offers no view of its sessions' waits"
		}
		judged := "storage, locks and commit"
		if len(s.Replicas) > 0 {
			judged = "storage, locks, commit and replication"
		}
		v.Unknown = append(v.Unknown, judged+": "+why)
		return nil
	}
	c := s.Categories
	if e := c[telemetry.WaitEngine]; e >= engineUnknown {
		v.Unknown = append(v.Unknown, fmt.Sprintf("storage and the page cache, in full: for %.0f%% of database time the sessions were at work in the engine, which the database's view of its sessions does not split into CPU and reads or writes", e))
	}
	io := c[telemetry.WaitRead] + c[telemetry.WaitWrite]
	reached, how := diskShare(s)
	storage, pageCache := io*reached/waitCeiling, io*(1-reached)/waitCeiling
	// Data reads and writes past the ceiling held the run wherever they
	// were served: the verdict names where most of the misses went (the
	// disk, or the OS page cache), scored on all of them. Split, two
	// halves of a wait that held the run could each stay below it.
	if io >= waitCeiling {
		if reached >= 0.5 {
			storage = io / waitCeiling
		} else {
			pageCache = io / waitCeiling
		}
	}
	out := []Limit{
		{Kind: LimitStorage, Score: storage,
			Why: fmt.Sprintf("data reads and writes took %.0f%% of database time%s", io, how)},
		{Kind: LimitPageCache, Score: pageCache,
			Why: fmt.Sprintf("data reads and writes took %.0f%% of database time%s", io, how)},
		{Kind: LimitLocks, Score: (c[telemetry.WaitLock] + c[telemetry.WaitLatch]) / waitCeiling,
			Why: fmt.Sprintf("lock waits took %.0f%% of database time and latch waits %.0f%%", c[telemetry.WaitLock], c[telemetry.WaitLatch])},
		{Kind: LimitCommit, Score: c[telemetry.WaitCommit] / waitCeiling,
			Why: fmt.Sprintf("commits' log writes and flushes took %.0f%% of database time", c[telemetry.WaitCommit])},
	}
	// Only a run on a server with replicas, or whose commits waited for
	// some, is judged on them.
	if share, ok := c[telemetry.WaitReplication]; ok || len(s.Replicas) > 0 {
		out = append(out, Limit{Kind: LimitReplication, Score: share / waitCeiling, Why: replicationWhy(share, s.Replicas)})
	}
	return out
}

// replicationWhy gives the share of database time commits waited for
// their replicas, and how far behind each replica that held them was
// (every replica, where none did): its flush lag, what a commit that
// waits for a replica's disk waits for, and the bytes it had yet to
// replay.
func replicationWhy(share float64, replicas []telemetry.ReplicaSummary) string {
	held := slices.ContainsFunc(replicas, func(r telemetry.ReplicaSummary) bool { return r.Synchronous })
	which := "synchronous replicas"
	if !held {
		which = "replicas"
	}
	why := fmt.Sprintf("commits waited for their %s %.0f%% of database time", which, share)
	for _, r := range replicas {
		if held && !r.Synchronous {
			continue
		}
		why += fmt.Sprintf("; %s's flush lag ", r.Name)
		if r.FlushLag.N > 0 {
			why += fmt.Sprintf("%s ms mean", lagMs(r.FlushLag.Mean))
		} else {
			why += "not measured"
		}
		if r.Behind.N > 0 {
			why += fmt.Sprintf(", %s behind", human.Bytes(r.Behind.Mean))
		}
		if len(r.SyncStates) > 0 {
			why += fmt.Sprintf(" (%s)", strings.Join(r.SyncStates, ", then "))
		}
	}
	return why
}

// lagMs is a lag in ms at a precision fitting its size: 0.42, 6.1, 230.
func lagMs(v float64) string {
	switch {
	case v < 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case v < 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// diskShare is the share of the database's cache misses that reached the
// data disk, with the figures; 1 where the disk's reads cannot be set
// against the misses. The device counts every process's reads, so more
// reads than misses count as all of them.
func diskShare(s telemetry.Summary) (float64, string) {
	if s.DB == nil || s.Host == nil || s.Host.Data == nil {
		return 1, ""
	}
	misses, reads := s.DB.Rates[telemetry.PhysicalReads], s.Host.Data.ReadIOPS
	if misses <= 0 {
		return 1, fmt.Sprintf("; the data disk read %s times/s at %.2f ms", human.Thousands(reads), s.Host.Data.ReadAwaitMs)
	}
	share := min(1, reads/misses)
	hit := ""
	if s.DB.HitPct != nil {
		hit = fmt.Sprintf(" (hit ratio %.2f%%)", *s.DB.HitPct)
	}
	return share, fmt.Sprintf("; the database missed its cache %s times/s%s and the data disk read %s times/s at %.2f ms, so %.0f%% of the misses reached the disk at most and the OS page cache served the rest",
		human.Thousands(misses), hit, human.Thousands(reads), s.Host.Data.ReadAwaitMs, share*100)
}

// vuTime splits the virtual users' time over the window: the share they
// spent in transactions (busy), a think-time limit where most of the rest
// went between them, and the share they waited for a pool's session.
func vuTime(d *Document) (busy float64, think *Limit, queued float64) {
	terms := vus(d)
	if terms <= 0 {
		return 0, nil, 0
	}
	var in, done float64
	for _, tx := range d.Transactions {
		in += float64(tx.Count) * tx.Latency.Mean / 1000
		done += float64(tx.Count)
	}
	// The seconds without a server are neither: the virtual users were
	// reconnecting, not thinking.
	out := outageIn(d)
	span := (d.WindowSeconds - out) * float64(terms)
	if span <= 0 {
		return 0, nil, 0
	}
	busy = min(1, in/span)
	if d.Sessions != nil {
		queued = min(busy, done*d.Sessions.Wait.Mean/1000/span)
	}
	between := 1 - busy
	why := fmt.Sprintf("the %s spent %.1f%% of their time in transactions and %.1f%% between them", human.Count(terms, "virtual user"), busy*100, between*100)
	if out > 0 {
		why += fmt.Sprintf(", leaving out the %.1f s the window had no server", out)
	}
	think = &Limit{Kind: LimitThink, Score: between / thinkCeiling, Why: why}
	return busy, think, queued
}

// outageIn is how many seconds of d's window it had no server.
func outageIn(d *Document) float64 {
	_, from, to := window(d)
	var out float64
	for _, o := range d.Outages {
		out += max(0, min(to, o.At+o.Seconds)-max(from, o.At))
	}
	return min(out, d.WindowSeconds)
}

// vus is how many virtual users (terminals) the run drove.
func vus(d *Document) int {
	if d.Sessions != nil && d.Sessions.Terminals > 0 {
		return d.Sessions.Terminals
	}
	return cmp.Or(ConfigInt(d.Config, "vus"), ConfigInt(d.Config, "sessions"))
}

// sessionLimit is too few sessions: a pool whose sessions were all lent
// while terminals queued, or, when nothing else came near its ceiling,
// virtual users busy all the time on a host with CPUs to spare.
func sessionLimit(d *Document, s telemetry.Summary, judged []Limit, busy, queued float64) *Limit {
	if p := d.Sessions; p != nil && p.Sessions < p.Terminals && queued > 0 {
		pool := fmt.Sprintf("all %d of the pool's sessions were", p.Sessions)
		if p.Sessions == 1 {
			pool = "the pool's one session was"
		}
		return &Limit{Kind: LimitSessions, Score: p.AllInUse / cpuCeiling,
			Why: fmt.Sprintf("%s lent in %.0f%% of the samples, and its %d terminals spent %.1f%% of their time waiting for one",
				pool, p.AllInUse*100, p.Terminals, queued*100)}
	}
	// Without the waits by category, storage, locks and commit cannot be
	// ruled out; nor storage where much of the time is the engine's, its
	// reads unseen.
	if s.Host == nil || s.Categories == nil || busy < cpuCeiling || s.Host.CPU.Busy()/100/cpuCeiling >= spareBelow ||
		s.Categories[telemetry.WaitEngine] >= engineUnknown {
		return nil
	}
	top := 0.0
	for _, l := range judged {
		if l.Kind != LimitThink {
			top = max(top, l.Score)
		}
	}
	if top >= spareBelow {
		return nil
	}
	users := human.Count(vus(d), "virtual user")
	why := fmt.Sprintf("the %s %s in a transaction %.0f%% of the time, yet the host's CPUs were %.0f%% busy and no wait took %.0f%% of database time: ",
		users, wasWere(vus(d)), busy*100, s.Host.CPU.Busy(), waitCeiling)
	// Sessions on CPU for most of their database time were held by their
	// own count (each runs on one CPU at a time), not by round trips.
	if cpu := s.Categories[telemetry.WaitCPU]; cpu >= 50 {
		why += fmt.Sprintf("the sessions were on CPU %.0f%% of database time, and a session runs on one CPU at a time, so more sessions would have used more of the host's CPUs", cpu)
	} else {
		why += "each waited on its own round trips, and more sessions would have driven more"
	}
	return &Limit{Kind: LimitSessions, Score: 1, Why: why}
}

// wasWere agrees a verb with a count.
func wasWere(n int) string {
	if n == 1 {
		return "was"
	}
	return "were"
}

// cpuset lists the CPUs of a cpuset list ("0-1,4"); none if empty or
// unreadable.
func cpuset(set string) []int {
	var out []int
	for _, part := range strings.Split(set, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return nil
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil
			}
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	return out
}

// cpus is a count of CPUs: "1 CPU", "2 CPUs".
func cpus(n float64) string {
	if n == 1 {
		return "1 CPU"
	}
	return strconv.FormatFloat(n, 'f', -1, 64) + " CPUs"
}

// ConfigInt is a whole number from a run's configuration, as the run
// recorded it or as JSON read it back; 0 where it is missing.
func ConfigInt(cfg map[string]any, key string) int {
	switch v := cfg[key].(type) {
	case float64:
		return int(v)
	case int:
		return v
	case interface{ Int64() (int64, error) }:
		n, _ := v.Int64()
		return int(n)
	}
	return 0
}

// Line is the verdict as one paragraph: what limited the run with the
// figures, the nearest of the rest, and what could not be judged.
func (v *Verdict) Line() string {
	var b strings.Builder
	b.WriteString("What limited this run: ")
	switch {
	case len(v.Limits) > 0:
		for i, l := range v.Limits {
			if i > 0 {
				b.WriteString("; then ")
			}
			fmt.Fprintf(&b, "%s (%s)", l.Kind, l.Why)
		}
		b.WriteString(".")
	case len(v.Below) > 0:
		l := v.Below[0]
		fmt.Fprintf(&b, "nothing measured reached its ceiling; the nearest, at %.0f%% of it, was %s (%s).", l.Score*100, l.Kind, l.Why)
	default:
		b.WriteString("the run's data cannot tell.")
	}
	var below []string
	for _, l := range v.Below {
		if len(v.Limits) == 0 && l == v.Below[0] {
			continue
		}
		below = append(below, fmt.Sprintf("%s %.0f%%", l.Kind, l.Score*100))
	}
	if len(below) > 0 {
		fmt.Fprintf(&b, " Below their ceilings: %s.", strings.Join(below, ", "))
	}
	if len(v.Unknown) > 0 {
		fmt.Fprintf(&b, " Not judged: %s.", strings.Join(v.Unknown, "; "))
	}
	for _, n := range v.Notes {
		fmt.Fprintf(&b, " Note: %s.", n)
	}
	return b.String()
}

// Short is the verdict in a line, for a sweep's point: what limited the
// run and the figure that says so, or the nearest when nothing did.
func (v *Verdict) Short() string {
	switch {
	case len(v.Limits) > 0:
		return fmt.Sprintf("%s: %s", v.Limits[0].Kind, v.Limits[0].Why)
	case len(v.Below) > 0:
		return fmt.Sprintf("none; nearest %s, at %.0f%% of its ceiling: %s", v.Below[0].Kind, v.Below[0].Score*100, v.Below[0].Why)
	}
	return "not judged"
}

// Top is the kind that limited the run, "none" when nothing reached its
// ceiling, "not judged" when nothing could be judged.
func (v *Verdict) Top() string {
	switch {
	case len(v.Limits) > 0:
		return v.Limits[0].Kind
	case len(v.Below) > 0:
		return "none"
	}
	return "not judged"
}

// LimitedBy is what limited most of a point's repetitions, with how many
// of those judged said so ("commit (3 of 4)"; "commit or storage (1 of 2
// each)" for a tie; "" when none was judged), and each repetition's
// verdict in a line.
func (p SweepPoint) LimitedBy() (summary string, each []string) {
	counts := map[string]int{}
	for rep, v := range p.Verdicts {
		if v == nil {
			continue
		}
		counts[v.Top()]++
		each = append(each, fmt.Sprintf("repetition %d: %s", rep+1, v.Short()))
	}
	if len(each) == 0 {
		return "", nil
	}
	most := slices.Max(slices.Collect(maps.Values(counts)))
	var top []string
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		if counts[k] == most {
			top = append(top, k)
		}
	}
	if len(top) > 1 {
		return fmt.Sprintf("%s (%d of %d each)", strings.Join(top, " or "), most, len(each)), each
	}
	return fmt.Sprintf("%s (%d of %d)", top[0], most, len(each)), each
}

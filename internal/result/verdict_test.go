package result

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/dbrig/dbrig/internal/telemetry"
)

// TestCPUSet: a cpuset list names its CPUs; a list that cannot be read
// names none, so that the host's CPUs stand in.
func TestCPUSet(t *testing.T) {
	for set, want := range map[string][]int{
		"0": {0}, "0-1": {0, 1}, "0,2-3": {0, 2, 3}, " 1 , 3": {1, 3},
		"": nil, "1-0": nil, "x": nil, "0-": nil,
	} {
		if got := cpuset(set); !slices.Equal(got, want) {
			t.Errorf("cpuset(%q) = %v, want %v", set, got, want)
		}
	}
}

// TestVerdictWithoutTelemetry: a run recorded without telemetry is judged
// on its virtual users' time alone, and says what it could not judge.
func TestVerdictWithoutTelemetry(t *testing.T) {
	d := &Document{WindowSeconds: 10, Config: map[string]any{"vus": 2.0},
		Transactions: []Tx{{Name: "a", Count: 1000}}}
	d.Transactions[0].Latency.Mean = 2 // ms: 2 s of 20 in transactions
	v := VerdictOf(d)
	if len(v.Limits) != 1 || v.Limits[0].Kind != LimitThink || len(v.Unknown) != 2 {
		t.Errorf("verdict %+v: want think time as the limit, and the CPUs and the waits not judged", v)
	}
	if VerdictOf(&Document{}) != nil {
		t.Error("a document with no window got a verdict")
	}
}

// TestVerdictShort: a sweep's line names the limit with the figure that
// says so, or the nearest resource and how near it came.
func TestVerdictShort(t *testing.T) {
	for _, c := range []struct {
		v    Verdict
		want string
	}{
		{Verdict{Limits: []Limit{{Kind: LimitCommit, Score: 1.83, Why: "commits took 55% of database time"}}},
			"commit: commits took 55% of database time"},
		{Verdict{Below: []Limit{{Kind: LimitServerCPU, Score: 0.8, Why: "1.4 of 2 CPUs"}}},
			"none; nearest server CPU, at 80% of its ceiling: 1.4 of 2 CPUs"},
		{Verdict{}, "not judged"},
	} {
		if got := c.v.Short(); got != c.want {
			t.Errorf("Short() = %q, want %q", got, c.want)
		}
	}
}

// TestLimitedBy: a point is limited by what most of its judged
// repetitions name, a tie by each of them; a point none of whose
// repetitions was judged says nothing.
func TestLimitedBy(t *testing.T) {
	commit := &Verdict{Limits: []Limit{{Kind: LimitCommit, Why: "w"}}}
	cpu := &Verdict{Limits: []Limit{{Kind: LimitServerCPU, Why: "c"}}}
	p := SweepPoint{Verdicts: []*Verdict{commit, nil, cpu, commit}}
	summary, each := p.LimitedBy()
	if summary != "commit (2 of 3)" || len(each) != 3 || each[1] != "repetition 3: server CPU: c" {
		t.Errorf("LimitedBy() = %q, %q", summary, each)
	}
	if summary, _ := (SweepPoint{Verdicts: []*Verdict{cpu, commit}}).LimitedBy(); summary != "commit or server CPU (1 of 2 each)" {
		t.Errorf("a tie: %q, want both named", summary)
	}
	if summary, each := (SweepPoint{Verdicts: []*Verdict{nil}}).LimitedBy(); summary != "" || each != nil {
		t.Errorf("no verdict: %q, %q", summary, each)
	}
}

// TestTooFewSessionsWhy: virtual users busy all the time on a host with
// CPUs to spare were held by their own number; the verdict says whether
// they waited on round trips or ran on a CPU each (the CPU test's one
// session on two CPUs).
func TestTooFewSessionsWhy(t *testing.T) {
	d := &Document{Config: map[string]any{"vus": 1.0}}
	host := &telemetry.HostSummary{CPU: telemetry.CPUTimes{User: 45, System: 5}}
	for cpu, want := range map[float64]string{
		100: "the 1 virtual user was in a transaction 100% of the time, yet the host's CPUs were 50% busy and no wait took 30% of database time: the sessions were on CPU 100% of database time, and a session runs on one CPU at a time",
		20:  "each waited on its own round trips",
	} {
		s := telemetry.Summary{Host: host, Categories: map[string]float64{telemetry.WaitCPU: cpu, telemetry.WaitRead: 100 - cpu}}
		l := sessionLimit(d, s, []Limit{{Kind: LimitServerCPU, Score: 0.56}}, 1, 0)
		if l == nil || l.Kind != LimitSessions || !strings.Contains(l.Why, want) {
			t.Errorf("on CPU %.0f%% of DB time: %+v, want %q in its why", cpu, l, want)
		}
	}
	// A resource near its ceiling is what held the run instead.
	s := telemetry.Summary{Host: host, Categories: map[string]float64{telemetry.WaitCPU: 100}}
	if l := sessionLimit(d, s, []Limit{{Kind: LimitServerCPU, Score: 0.8}}, 1, 0); l != nil {
		t.Errorf("with the server's CPU at 80%% of its ceiling: %+v, want no session limit", l)
	}
}

// TestDataWaitsPastTheCeiling: data reads past the wait ceiling held the
// run even when neither the disk nor the OS page cache served enough of
// them to reach it alone: the verdict names where most were served (the
// DVD Store reports on a small cache: 37% of database time on reads,
// 54% of the misses from the disk). Below the ceiling, each keeps its
// share.
func TestDataWaitsPastTheCeiling(t *testing.T) {
	score := func(io, misses, reads float64) (storage, pageCache float64) {
		s := telemetry.Summary{
			Categories: map[string]float64{telemetry.WaitRead: io},
			DB:         &telemetry.DBSummary{Rates: map[string]float64{telemetry.PhysicalReads: misses}},
			Host:       &telemetry.HostSummary{Data: &telemetry.DiskRates{ReadIOPS: reads}},
		}
		for _, l := range waitLimits(&Document{}, s, &Verdict{}) {
			switch l.Kind {
			case LimitStorage:
				storage = l.Score
			case LimitPageCache:
				pageCache = l.Score
			}
		}
		return storage, pageCache
	}
	near := func(a, b float64) bool { return a > b-1e-9 && a < b+1e-9 }
	if st, pc := score(36, 1000, 540); !near(st, 36/waitCeiling) || !near(pc, 36*0.46/waitCeiling) {
		t.Errorf("36%% on reads, 54%% of misses from the disk: storage %.2f, page cache %.2f; want storage on all of it", st, pc)
	}
	if st, pc := score(36, 1000, 300); !near(pc, 36/waitCeiling) || !near(st, 36*0.3/waitCeiling) {
		t.Errorf("36%% on reads, 30%% of misses from the disk: storage %.2f, page cache %.2f; want the page cache on all of it", st, pc)
	}
	if st, pc := score(20, 1000, 540); !near(st, 20*0.54/waitCeiling) || !near(pc, 20*0.46/waitCeiling) {
		t.Errorf("20%% on reads: storage %.2f, page cache %.2f; want each its share", st, pc)
	}
}

// TestEngineTimeUnjudged: time at work that the database does not split
// into CPU and waits (MariaDB's process list without performance_schema)
// may hide data reads: the verdict says it cannot judge storage in full,
// and does not put busy sessions on a spare host down to their number.
func TestEngineTimeUnjudged(t *testing.T) {
	d := &Document{Config: map[string]any{"vus": 2.0}}
	host := &telemetry.HostSummary{CPU: telemetry.CPUTimes{User: 50, System: 6}}
	s := telemetry.Summary{Host: host, Categories: map[string]float64{telemetry.WaitEngine: 88, telemetry.WaitCommit: 12}}
	if l := sessionLimit(d, s, nil, 1, 0); l != nil {
		t.Errorf("88%% of database time in the engine: %+v, want no session limit", l)
	}
	v := &Verdict{}
	waitLimits(d, s, v)
	if len(v.Unknown) != 1 || !strings.Contains(v.Unknown[0], "88% of database time") {
		t.Errorf("unknown %q, want storage named as not judged in full", v.Unknown)
	}
	s.Categories = map[string]float64{telemetry.WaitEngine: 5, telemetry.WaitCPU: 95}
	v = &Verdict{}
	waitLimits(d, s, v)
	if l := sessionLimit(d, s, nil, 1, 0); l == nil || len(v.Unknown) != 0 {
		t.Errorf("5%% in the engine: limit %+v, unknown %q; want the sessions, and nothing unknown", l, v.Unknown)
	}
}

// TestClientRunQueueWait: a client held to one CPU that used 0.78 of it
// beside other work, and waited 0.2 more in the run queue, wanted all of
// it: its CPU limited the run. Without the wait it is below its ceiling.
func TestClientRunQueueWait(t *testing.T) {
	d := &Document{Host: Host{CPUs: 2}, Config: map[string]any{"client_cpus": 1.0},
		Telemetry: &telemetry.Recording{Host: &telemetry.HostRecord{}}}
	wait := 10.0 // percent of the host's 2 CPUs: 0.2 of one
	host := &telemetry.HostSummary{CPU: telemetry.CPUTimes{User: 80, System: 8}, Client: 39, ClientWait: &wait}
	l := cpuLimits(d, telemetry.Summary{Host: host}, &Verdict{})[0]
	if l.Kind != LimitClientCPU || l.Score < 1 || !strings.Contains(l.Why, "used 0.78 of the 1 CPU it may use, and its threads waited 0.20 s a second more for a CPU") {
		t.Errorf("with its run-queue wait: %+v, want the client's CPU at its ceiling, and why", l)
	}
	// The wait lifts the score no further than all its CPUs: a client
	// that used 1.2 of 1 and waited 0.4 scores on its use.
	host.Client, wait = 60, 20
	if l := cpuLimits(d, telemetry.Summary{Host: host}, &Verdict{})[0]; math.Abs(l.Score-1.2/0.9) > 1e-9 {
		t.Errorf("a client at 1.2 of its 1 CPU, waiting 0.4: score %.3f, want its use's %.3f", l.Score, 1.2/0.9)
	}
	// A client that used less than half its CPUs, on a host with CPU to
	// spare, wanted no more, whatever its wake-ups waited.
	host.Client, wait = 20, 40
	if l := cpuLimits(d, telemetry.Summary{Host: host}, &Verdict{})[0]; l.Score >= 1 || strings.Contains(l.Why, "waited") {
		t.Errorf("a client at 0.4 of its CPU: %+v, want it below its ceiling", l)
	}
	// But on CPUs at their ceiling, kept busy by others, the wait is for
	// CPU there was not: a client kept to 0.36 of its CPU wanted it all.
	host.Client, wait, host.CPU = 18, 40, telemetry.CPUTimes{User: 85, System: 10}
	if l := cpuLimits(d, telemetry.Summary{Host: host}, &Verdict{})[0]; l.Score < 1 || !strings.Contains(l.Why, "waited 0.80 s") {
		t.Errorf("a client at 0.36 of its CPU, waiting 0.8, on CPUs 95%% busy: %+v, want it at its ceiling", l)
	}
	host.Client, host.ClientWait, host.CPU = 39, nil, telemetry.CPUTimes{User: 80, System: 8}
	if l := cpuLimits(d, telemetry.Summary{Host: host}, &Verdict{})[0]; l.Score >= 1 || strings.Contains(l.Why, "waited") {
		t.Errorf("without a run-queue wait: %+v, want the client below its ceiling", l)
	}
}

// TestServerRunQueueWait: a server confined to CPU 0, whose two sessions
// each wanted a CPU, on a host other work kept busy, used 0.48 of its CPU
// and waited 1.1 s a second for it (a CI run's figures): its CPU limited
// the run. Without the wait it was held by "something else".
func TestServerRunQueueWait(t *testing.T) {
	d := &Document{Host: Host{CPUs: 2},
		Telemetry: &telemetry.Recording{Host: &telemetry.HostRecord{Facts: telemetry.HostFacts{ServerCPUs: "0"}}}}
	server, wait := 24.0, 55.0 // percent of the host's 2 CPUs
	busy := telemetry.CPUTimes{User: 90, System: 10}
	host := &telemetry.HostSummary{CPU: busy, PerCPU: []telemetry.CPUTimes{busy, busy}, Client: 21, Server: &server, ServerWait: &wait}
	serverLimit := func() Limit { return cpuLimits(d, telemetry.Summary{Host: host}, &Verdict{})[1] }
	if l := serverLimit(); l.Kind != LimitServerCPU || l.Score < 1 || !strings.Contains(l.Why, "kept 0.48 of its 1 CPU busy, and its processes waited 1.10 s a second more for a CPU") {
		t.Errorf("with its run-queue wait: %+v, want the server's CPU at its ceiling, and why", l)
	}
	host.ServerWait = nil
	if l := serverLimit(); l.Score >= 1 || strings.Contains(l.Why, "waited") {
		t.Errorf("without a run-queue wait: %+v, want the server below its ceiling", l)
	}
	// On its CPU with time to spare, a server of 0.3 wanted no more,
	// whatever its wake-ups waited.
	idle := telemetry.CPUTimes{User: 20, System: 5, Idle: 75}
	host.CPU, host.PerCPU, host.ServerWait, server = idle, []telemetry.CPUTimes{idle, idle}, &wait, 15
	if l := serverLimit(); l.Score >= 1 || strings.Contains(l.Why, "waited") {
		t.Errorf("a server at 0.3 of its CPU with CPU to spare: %+v, want it below its ceiling", l)
	}
	// Nor one that used most of its CPUs on a host with time to spare:
	// four backends at 1.32 of two CPUs, the host 69% busy, whose wake-ups
	// waited 1.35 s a second (a run held by its commits).
	d.Telemetry.Host.Facts.ServerCPUs = ""
	some := telemetry.CPUTimes{User: 55, System: 14, Idle: 31}
	server, wait = 66, 67.5
	host.CPU, host.PerCPU = some, []telemetry.CPUTimes{some, some}
	if l := serverLimit(); l.Score >= 1 || strings.Contains(l.Why, "waited") {
		t.Errorf("a server at 1.32 of 2 CPUs on a host 69%% busy: %+v, want it below its ceiling", l)
	}
}

// TestNodesServerCPU: on a server of several nodes on this host (a
// primary and its replicas), the server's CPU is theirs together, each
// one's share named, and only what is neither the client nor a node is
// another process's; a node elsewhere is said so. A document without
// nodes (a server of its own, or recorded before they were read) is
// judged on the server's tree, as before.
func TestNodesServerCPU(t *testing.T) {
	server := 29.0 // % of the host's 2 CPUs: 0.58
	nodes := []telemetry.NodeCPU{{Name: "node1", Pct: 29}, {Name: "node2", Pct: 10}, {Name: "node3", Pct: 8}}
	for _, c := range []struct {
		name  string
		found []telemetry.Node
		nodes []telemetry.NodeCPU
		// score is the server's CPU's, why what its why begins with, note
		// the note on other processes ("" for none).
		score     float64
		why, note string
	}{
		{"a server of its own", nil, nil, 0.58 / 1.8,
			"the server kept 0.58 of its 2 CPUs busy;",
			"other processes than the client and the server kept 0.52 of the host's 2 CPUs busy"},
		{"three nodes here", []telemetry.Node{{Name: "node1", PID: 10}, {Name: "node2", PID: 11}, {Name: "node3", PID: 12}}, nodes, 0.94 / 1.8,
			"the cluster's 3 nodes kept 0.94 of the 2 CPUs busy: node1 0.58, node2 0.20, node3 0.16;", ""},
		{"one node elsewhere", []telemetry.Node{{Name: "node1", PID: 10}, {Name: "node2", PID: 11}, {Name: "node3"}}, nodes[:2], 0.78 / 1.8,
			"the cluster's 2 nodes on this host (and 1 elsewhere) kept 0.78 of the 2 CPUs busy: node1 0.58, node2 0.20;", ""},
		{"busier than its nodes", []telemetry.Node{{Name: "node1", PID: 10}, {Name: "node2", PID: 11}}, nodes[:1], 0.58 / 1.8,
			"the cluster's 1 node kept 0.58 of the 2 CPUs busy: node1 0.58;",
			"other processes than the client and the cluster's nodes kept 0.52 of the host's 2 CPUs busy"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := &Document{Host: Host{CPUs: 2}, Telemetry: &telemetry.Recording{Host: &telemetry.HostRecord{Facts: telemetry.HostFacts{Nodes: c.found}}}}
			host := &telemetry.HostSummary{CPU: telemetry.CPUTimes{User: 60, System: 10}, Client: 15, Server: &server, Nodes: c.nodes}
			v := &Verdict{}
			limits := cpuLimits(d, telemetry.Summary{Host: host}, v)
			i := slices.IndexFunc(limits, func(l Limit) bool { return l.Kind == LimitServerCPU })
			if i < 0 {
				t.Fatalf("limits %+v, want the server's CPU judged", limits)
			}
			if l := limits[i]; math.Abs(l.Score-c.score) > 1e-9 || !strings.HasPrefix(l.Why, c.why) {
				t.Errorf("server CPU %.3f, %q; want %.3f, %q", l.Score, l.Why, c.score, c.why)
			}
			if note := strings.Join(v.Notes, "; "); c.note == "" && note != "" || !strings.Contains(note, c.note) {
				t.Errorf("notes %q, want %q", note, c.note)
			}
		})
	}
}

// TestReplicationVerdict: commits held for their replicas are judged
// against the waits' ceiling, with the lag of each replica that held
// them (every replica's, where none did); a run without replicas is not
// judged on them, nor one recorded before the wait had a category of its
// own, whose commits' share is the commit's.
func TestReplicationVerdict(t *testing.T) {
	sync := telemetry.ReplicaSummary{Name: "node2", SyncStates: []string{"quorum"}, Synchronous: true, Readings: 5,
		FlushLag: telemetry.Level{Mean: 6.08, N: 5}, Behind: telemetry.Level{Mean: 0, N: 5}}
	async := telemetry.ReplicaSummary{Name: "node3", SyncStates: []string{"potential", "async"}, Readings: 5,
		FlushLag: telemetry.Level{Mean: 0.4, N: 5}, Behind: telemetry.Level{Mean: 1200, N: 5}}
	for _, c := range []struct {
		name       string
		categories map[string]float64
		replicas   []telemetry.ReplicaSummary
		score      float64 // -1: not judged
		why        string
	}{
		{"a synchronous replica", map[string]float64{telemetry.WaitCPU: 20, telemetry.WaitReplication: 71, telemetry.WaitCommit: 9},
			[]telemetry.ReplicaSummary{sync, async}, 71 / waitCeiling,
			"commits waited for their synchronous replicas 71% of database time; node2's flush lag 6.1 ms mean, 0 B behind (quorum)"},
		{"an asynchronous replica", map[string]float64{telemetry.WaitCPU: 60, telemetry.WaitCommit: 40},
			[]telemetry.ReplicaSummary{async}, 0,
			"commits waited for their replicas 0% of database time; node3's flush lag 0.40 ms mean, 1.2 KiB behind (potential, then async)"},
		{"a replica whose lag was not measured", map[string]float64{telemetry.WaitCPU: 100},
			[]telemetry.ReplicaSummary{{Name: "node2", Readings: 1}}, 0,
			"commits waited for their replicas 0% of database time; node2's flush lag not measured"},
		{"no replicas", map[string]float64{telemetry.WaitCPU: 60, telemetry.WaitCommit: 40}, nil, -1, ""},
		{"recorded before the category", map[string]float64{telemetry.WaitCPU: 29, telemetry.WaitCommit: 71}, nil, -1, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			limits := waitLimits(&Document{}, telemetry.Summary{Categories: c.categories, Replicas: c.replicas}, &Verdict{})
			i := slices.IndexFunc(limits, func(l Limit) bool { return l.Kind == LimitReplication })
			switch {
			case c.score < 0 && i >= 0:
				t.Errorf("judged on replication: %+v", limits[i])
			case c.score < 0:
			case i < 0:
				t.Errorf("not judged on replication: %+v", limits)
			case math.Abs(limits[i].Score-c.score) > 1e-9 || limits[i].Why != c.why:
				t.Errorf("replication %.3f, %q; want %.3f, %q", limits[i].Score, limits[i].Why, c.score, c.why)
			}
		})
	}
}

// TestReplicationBeforeLocks: where commits held for their replicas and
// lock waits both limited a run, the replicas come first, since the locks
// were held through those commits; a CPU at its ceiling stays first, and
// locks alone are left where they are.
func TestReplicationBeforeLocks(t *testing.T) {
	for _, c := range []struct{ limits, want []string }{
		{[]string{LimitLocks, LimitReplication}, []string{LimitReplication, LimitLocks}},
		{[]string{LimitServerCPU, LimitLocks, LimitCommit, LimitReplication}, []string{LimitServerCPU, LimitReplication, LimitLocks, LimitCommit}},
		{[]string{LimitReplication, LimitLocks}, []string{LimitReplication, LimitLocks}},
		{[]string{LimitLocks, LimitCommit}, []string{LimitLocks, LimitCommit}},
	} {
		v := &Verdict{}
		for _, k := range c.limits {
			v.Limits = append(v.Limits, Limit{Kind: k, Score: 1})
		}
		replicationFirst(v)
		var got []string
		for _, l := range v.Limits {
			got = append(got, l.Kind)
		}
		note := slices.Contains(c.limits, LimitReplication) && slices.Contains(c.limits, LimitLocks)
		if !slices.Equal(got, c.want) || (len(v.Notes) == 1) != note {
			t.Errorf("%v: ranked %v with notes %q, want %v and a note %v", c.limits, got, v.Notes, c.want, note)
		}
	}
}

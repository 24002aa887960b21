// Package telemetry records what happened on the host and inside the
// database while a run was measured, so that a report can say why one run
// is faster than another: CPU by class and by CPU, frequency, C-states,
// disk IOPS and latency, memory, the database's own counters, sampled
// sessions (what they waited on) and top statements.
//
// It knows no workload and no database by name. A target offers its
// database's side through Source, with counters under the generic keys
// below where it has them; the host side is read from /proc and /sys.
package telemetry

import (
	"context"
	"errors"
	"time"
)

// ErrUnsupported is what a Source returns for what its database lacks.
var ErrUnsupported = errors.New("not supported by this database")

// Recording is everything sampled during one run. Times are seconds since
// the run started, as the run document's marks and series are: the
// recorder counts from its own start, and the runner moves them onto the
// driver's clock (Shift).
type Recording struct {
	// Interval is the host and counter sampling period, in seconds.
	Interval float64 `json:"interval_seconds"`
	// Window is the measured window, [start, end]; only it counts.
	Window [2]float64  `json:"window"`
	Host   *HostRecord `json:"host,omitempty"`
	DB     *DBRecord   `json:"db,omitempty"`
	// Unavailable says, per thing that could not be recorded, why
	// ("frequency": "perf_event_open: permission denied").
	Unavailable map[string]string `json:"unavailable,omitempty"`
	// Cost is the client CPU the recording's own sampling took, where
	// the OS tells a thread's CPU time.
	Cost *Cost `json:"cost,omitempty"`
	// Gaps are the stretches in which the database could not be read (its
	// server down or restarting): from the last sample that read it to the
	// first that did again.
	Gaps []Gap `json:"gaps,omitempty"`
	// Others are the sessions of other clients than the run that were
	// active in the measured database during the window; nil where they
	// could not be read (Unavailable["other_sessions"] says why).
	Others *Others `json:"other_sessions,omitempty"`
}

// OtherSessions is the key under which Recording.Unavailable says why the
// other clients' sessions could not be read.
const OtherSessions = "other_sessions"

// Others are the sessions of other clients than the run's own that were
// active in the measured database during the measured window, as the
// session sampler saw them and as the source read them at the window's
// edges. The database's own counters count their work with the run's.
type Others struct {
	// Sessions counts them, each once however often it was seen.
	Sessions int `json:"sessions"`
	// Clients counts them by the name their client gave them (PostgreSQL's
	// application_name), "" for a session without one.
	Clients map[string]int `json:"clients,omitempty"`
}

// Shift makes the recording's times count from d seconds after the
// instant they counted from: the runner puts them on the driver's clock,
// which starts once the virtual users are open, so that the telemetry's
// charts and the throughput's share one time axis. Samples taken while
// the virtual users opened then have negative times.
func (r *Recording) Shift(d float64) {
	r.Window[0] -= d
	r.Window[1] -= d
	for i := range r.Gaps {
		r.Gaps[i].From -= d
		r.Gaps[i].To -= d
	}
	if r.Host != nil {
		for i := range r.Host.Samples {
			r.Host.Samples[i].T -= d
		}
	}
	if r.DB == nil {
		return
	}
	for i := range r.DB.Samples {
		r.DB.Samples[i].T -= d
	}
	if r.DB.Sessions != nil {
		for i := range r.DB.Sessions.Buckets {
			r.DB.Sessions.Buckets[i].T -= d
		}
	}
	for _, series := range r.DB.Replicas {
		for i := range series.Samples {
			series.Samples[i].T -= d
		}
	}
}

// Gap is a stretch without the database's side of telemetry.
type Gap struct {
	From float64 `json:"from"`
	To   float64 `json:"to"`
	// ServerPID is the server's process after the gap, where it is
	// another than before: the host's side follows it from then on.
	ServerPID int `json:"server_pid,omitempty"`
}

// Cost is what the samplers cost the client over the whole recording, in
// CPU seconds of the threads they ran on: the host and counter samples
// each --sample, and the sampled sessions.
type Cost struct {
	Samples  float64 `json:"samples_cpu_s"`
	Sessions float64 `json:"sessions_cpu_s"`
}

// HostRecord is the host's side of a recording.
type HostRecord struct {
	Facts HostFacts `json:"facts"`
	// CStates names the idle states, in the order of HostSample.CStates.
	CStates []string     `json:"cstates,omitempty"`
	Samples []HostSample `json:"samples"`
}

// HostFacts are the host's settings that explain a result: the kernel's
// tunables and where the data lives.
type HostFacts struct {
	TransparentHuge string `json:"transparent_hugepages,omitempty"` // the selected mode, "madvise"
	NrHugepages     int64  `json:"nr_hugepages"`
	CpufreqDriver   string `json:"cpufreq_driver,omitempty"`
	CpufreqGovernor string `json:"cpufreq_governor,omitempty"`
	CpuidleDriver   string `json:"cpuidle_driver,omitempty"`
	CpuidleGovernor string `json:"cpuidle_governor,omitempty"`
	FrequencySource string `json:"frequency_source,omitempty"` // "perf cycles", "cpuinfo_avg_freq", "scaling_cur_freq"
	DataPath        string `json:"data_path,omitempty"`
	DataDevice      string `json:"data_device,omitempty"` // as in /proc/diskstats, "vda"
	DataDeviceSched string `json:"data_device_scheduler,omitempty"`
	ServerPID       int    `json:"server_pid,omitempty"`
	// Nodes are the nodes of the server the run is on (a primary and its
	// replicas), as the run found them at its start; none for a server
	// of its own.
	Nodes []Node `json:"nodes,omitempty"`
	// Embedded says the database runs inside the client's process.
	Embedded          bool   `json:"embedded,omitempty"`
	ServerMemoryLimit int64  `json:"server_memory_limit_bytes,omitempty"` // a confined server's cgroup limit
	ServerCPUs        string `json:"server_cpus,omitempty"`               // a confined server's cpuset
	ClientCPUs        string `json:"client_cpus,omitempty"`               // the client's affinity, when pinned
	OnlineCPUs        int    `json:"online_cpus"`
}

// CPUTimes split a CPU's time over an interval, in percent of that time.
// Guest time is inside User, as the kernel counts it.
type CPUTimes struct {
	User   float64 `json:"user"` // with nice
	System float64 `json:"system"`
	IOWait float64 `json:"iowait"`
	IRQ    float64 `json:"irq"` // hard and soft
	Steal  float64 `json:"steal"`
	Idle   float64 `json:"idle"`
}

// Busy is the share of time a CPU ran something (steal excluded: the
// hypervisor ran someone else).
func (c CPUTimes) Busy() float64 { return c.User + c.System + c.IRQ }

// HostSample is one interval on the host, ending at T. Rates are per
// second over the interval, shares in percent of it.
type HostSample struct {
	T  float64 `json:"t"`
	DT float64 `json:"dt"`
	// CPU is all CPUs together (100 = every CPU busy); PerCPU by CPU number.
	CPU    CPUTimes   `json:"cpu"`
	PerCPU []CPUTimes `json:"per_cpu,omitempty"`
	// Client is dbrig's own process, Server the server's process tree
	// (nil when it is not on this host or not known), both in percent of
	// all CPUs' elapsed time, as pidstat gives them (summed and divided by
	// the CPUs). CPU's split is of /proc/stat's ticks, as mpstat's, which
	// fall a few percent short of the elapsed time under a load that
	// idles often: Client + Server can then exceed CPU.Busy() a little.
	Client float64  `json:"client_pct"`
	Server *float64 `json:"server_pct,omitempty"`
	// Nodes are the process trees of the nodes of the server the run is
	// on, by name, in the same units as Server (whose tree is one of
	// them): a node on this host whose root process was read at both
	// ends of the interval. A node gone (lost at a failover) is absent
	// from then on; none where the server is a server of its own.
	Nodes map[string]float64 `json:"nodes_pct,omitempty"`
	// ClientWait is the time dbrig's threads were runnable and waited for
	// a CPU (the kernel's run-queue wait), in the same units as Client:
	// CPU the client wanted and did not get. Nil where the kernel keeps no
	// such count, and in documents recorded before dbrig read it.
	ClientWait *float64 `json:"client_wait_pct,omitempty"`
	// ServerWait is the same for the processes of Server's tree, and of
	// the nodes' where there are nodes (so beside HostSummary.ServerCPU):
	// CPU the server wanted and did not get, a server held to its CPUs or
	// sharing them with other work.
	ServerWait *float64 `json:"server_wait_pct,omitempty"`
	// AvgMHz is cycles over elapsed time, BusyMHz cycles over busy time,
	// by CPU; absent where no source of frequency exists.
	AvgMHz  []float64 `json:"avg_mhz,omitempty"`
	BusyMHz []float64 `json:"bzy_mhz,omitempty"`
	// CStates are residency percentages by CPU, then by HostRecord.CStates.
	CStates [][]float64 `json:"cstate_pct,omitempty"`
	Disks   []DiskRates `json:"disks,omitempty"`
	Memory  Memory      `json:"memory"`
	// ContextSwitches per second; Running and Blocked are the run queue
	// and the processes blocked on IO at the sample's end.
	ContextSwitches float64 `json:"ctxt_per_s"`
	Running         int64   `json:"procs_running"`
	Blocked         int64   `json:"procs_blocked"`
}

// DiskRates are one block device's figures over an interval.
type DiskRates struct {
	Device       string  `json:"device"`
	ReadIOPS     float64 `json:"r_iops"`
	WriteIOPS    float64 `json:"w_iops"`
	ReadMBps     float64 `json:"r_mbps"`
	WriteMBps    float64 `json:"w_mbps"`
	ReadAwaitMs  float64 `json:"r_await_ms"`
	WriteAwaitMs float64 `json:"w_await_ms"`
	UtilPct      float64 `json:"util_pct"`
}

// Memory is the host's memory at the end of an interval, in bytes
// (huge pages in pages).
type Memory struct {
	Free         int64 `json:"free"`
	Available    int64 `json:"available"`
	Cached       int64 `json:"cached"`
	Dirty        int64 `json:"dirty"`
	Writeback    int64 `json:"writeback"`
	SwapUsed     int64 `json:"swap_used"`
	HugeTotal    int64 `json:"huge_total"`
	HugeFree     int64 `json:"huge_free"`
	HugeReserved int64 `json:"huge_rsvd"`
	// ServerCgroup is a confined server's memory use (page cache
	// included), 0 when it is not confined.
	ServerCgroup int64 `json:"server_cgroup,omitempty"`
}

// Generic counter keys a Source reports where its database keeps them,
// as cumulative totals. A source may add its own keys ("pg.temp_bytes");
// the report shows those as they are.
const (
	Commits       = "commits"
	Rollbacks     = "rollbacks"
	LogicalReads  = "logical_reads"  // block or page requests
	PhysicalReads = "physical_reads" // requests the buffer cache missed
	BlockWrites   = "block_writes"   // blocks written out of the cache
	WALBytes      = "wal_bytes"      // redo
	WALRecords    = "wal_records"
	Checkpoints   = "checkpoints"
	Deadlocks     = "deadlocks"
	ReadTimeMs    = "read_time_ms" // time spent reading blocks, where timed
	TempBytes     = "temp_bytes"
	DatabaseBytes = "database_bytes" // a gauge: the database's size on disk
)

// DBRecord is the database's side of a recording.
type DBRecord struct {
	Version string `json:"version,omitempty"`
	// Settings are every setting not at its default, with the source's
	// own notes (such as an extension the managed server loaded).
	Settings map[string]string `json:"settings,omitempty"`
	// Samples are the cumulative counters, read every interval and at
	// the window's edges.
	Samples []DBSample `json:"samples"`
	// Sessions is the active session history, bucketed by interval.
	Sessions *SessionHistory `json:"sessions,omitempty"`
	// Tables are breakdowns over the measured window (end minus start):
	// IO by backend type, top statements, checkpoints.
	Tables []Table `json:"tables,omitempty"`
	// Replicas are the primary's replicas, a series each, read with the
	// counters (ReplicaSource); none where the server had none.
	Replicas []ReplicaSeries `json:"replicas,omitempty"`
	// Members are the nodes of a cluster whose nodes all take writes, a
	// series each, read with the counters (MemberSource); none where the
	// server is one.
	Members []MemberSeries `json:"members,omitempty"`
}

// DBSample is one reading of the counters.
type DBSample struct {
	T        float64            `json:"t"`
	Counters map[string]float64 `json:"counters"`
}

// SessionHistory is what the sampled sessions were doing, bucketed: in
// each bucket, how many times a session was seen in each state.
type SessionHistory struct {
	Hz      float64         `json:"hz"`
	Buckets []SessionBucket `json:"buckets"`
	// Categories maps each "class/event" seen to its wait category (a
	// Wait* constant); a recording made before categories has none.
	Categories map[string]string `json:"categories,omitempty"`
}

// SessionBucket covers the interval ending at T. Counts are the
// foreground sessions (those that run the workload) by "class/event"
// ("CPU/CPU", "IO/DataFileRead", "LWLock/WALWrite"); their sum divided by
// Samples is the average active sessions.
type SessionBucket struct {
	T       float64        `json:"t"`
	Samples int            `json:"samples"`
	Counts  map[string]int `json:"counts,omitempty"`
	// Background are the server's own processes (a checkpointer, an
	// autovacuum worker) by kind, then by "class/event". A recording made
	// before they were told apart has none: its Counts hold them too.
	Background map[string]map[string]int `json:"background,omitempty"`
	// Queries counts sightings by query id, for top statements by time
	// seen active.
	Queries map[string]int `json:"queries,omitempty"`
}

// Table is a breakdown a source reads cumulatively, stored as the
// difference over the measured window. Rows are keyed by their labels.
type Table struct {
	Name    string   `json:"name"`  // "top_sql", "io_by_backend"
	Title   string   `json:"title"` // as a report heads it
	Labels  []string `json:"labels"`
	Columns []Column `json:"columns"`
	// Sort is the column that orders the rows in a report, largest first.
	Sort int   `json:"sort,omitempty"`
	Rows []Row `json:"rows"`
}

// Column is one numeric column of a Table.
type Column struct {
	Key   string `json:"key"`
	Label string `json:"label"`
	Unit  string `json:"unit,omitempty"`
}

// Row is one row of a Table.
type Row struct {
	Labels []string  `json:"labels"`
	Values []float64 `json:"values"`
	// Text is a long label a report may shorten (a statement's SQL).
	Text string `json:"text,omitempty"`
}

// Session is one active session, as a sampler saw it.
type Session struct {
	Class   string // wait event class, "CPU" when on CPU
	Event   string // "CPU" when on CPU
	State   string
	Backend string // the kind of process, as the database names it
	QueryID string
	// Background marks a process of the server's own, which runs no
	// client's statements: its time is not database time.
	Background bool
	// Category is where the time goes in terms every target shares (one
	// of the Wait* constants), as the source maps its own wait's name.
	Category string
	// Other marks a session of another client than the run (whose
	// sessions, those of all its parts included, the source tells by the
	// name the target gives them); ID tells it from other sessions over
	// the server's life, and Client is the name its client gave it.
	Other  bool
	ID     string
	Client string
}

// Wait categories: where a session's time went, in terms every target
// shares, so that a run's verdict on what limited it reads the same on
// any database. A target's source maps its own waits to them.
const (
	WaitCPU         = "cpu"         // on CPU, waiting on nothing
	WaitRead        = "read"        // reading data blocks: cache misses
	WaitWrite       = "write"       // writing, extending or syncing data files
	WaitCommit      = "commit"      // flushing the log for commits (WAL, redo)
	WaitReplication = "replication" // a commit held until replicas confirm its log (synchronous replication)
	WaitLock        = "lock"        // a row or table lock another session holds
	WaitLatch       = "latch"       // a short internal lock: a buffer's, a mutex, a pin
	WaitClient      = "client"      // waiting for the client's next statement
	WaitOther       = "other"
	// WaitEngine is a session at work that the database's view does not
	// split into CPU and waits (a process list's state): on CPU, or in a
	// read or write it does not show.
	WaitEngine = "engine"
)

// Source is what a target offers telemetry: its database's side. It holds
// its own connections, apart from the run's sessions. Every method may be
// called from its own goroutine.
type Source interface {
	// Counters reads the cumulative counters (the generic keys where the
	// database has them).
	Counters(ctx context.Context) (map[string]float64, error)
	// Tables reads the cumulative breakdowns.
	Tables(ctx context.Context) ([]Table, error)
	// Sessions reads the active sessions once, leaving out the sampler's
	// own; ErrUnsupported where the database has no such view.
	Sessions(ctx context.Context) ([]Session, error)
	// Others reads the sessions of other clients than the run in the
	// measured database (Session.Other) that were active at any moment
	// since its previous call, idle ones included, or at its first call
	// those active then: read at the window's edges, it finds what ran
	// between the sampler's looks. An error that says why where the
	// source cannot tell the run's sessions from other clients'.
	Others(ctx context.Context) ([]Session, error)
	// Settings reads the settings not at their default, and the version.
	Settings(ctx context.Context) (version string, settings map[string]string, err error)
	// Local tells where the server is on this host: the PID of its root
	// process and its data directory; 0 and "" when it is elsewhere, and
	// Embedded as the PID of a database that runs inside the client.
	Local(ctx context.Context) (pid int, dataDir string, err error)
	Close() error
}

// Embedded is the PID Source.Local gives for a database engine inside
// dbrig's own process, whose CPU time is the client's.
const Embedded = -1

// Sourcer is a target that offers telemetry.
type Sourcer interface {
	Telemetry(ctx context.Context) (Source, error)
}

// Config is how a run records telemetry.
type Config struct {
	// Off turns recording off (--no-telemetry).
	Off bool
	// Interval between host and counter samples; 1 s by default.
	Interval time.Duration
	// SessionHz is the session sampler's rate; 10 by default, 0 = off.
	SessionHz float64
	// Server is what the caller knows of the server, when it manages it.
	Server Server
}

// Server is what a caller that manages the server knows of it.
type Server struct {
	// PID and DataPath win over what the source says.
	PID      int
	DataPath string
	// A confined server's limits, and the client's pinning.
	MemoryLimit int64
	CPUs        string
	ClientCPUs  string
	// MemoryCgroup is the directory of a confined server's memory cgroup,
	// read for its use each sample.
	MemoryCgroup string
}

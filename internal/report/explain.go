package report

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/dbrig/dbrig/internal/human"
	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/telemetry"
)

// The "why" sections of a run, after AWR's: what the database did per
// second and per transaction, what its sessions waited on, its top
// statements, and what the host's CPUs and disks did. They are built once
// as blocks of notes and tables, which the HTML page and the text both
// show, so the two never disagree.

// Keys of the blocks the HTML page adds charts to.
const (
	waitsKey = "waits"
	cpusKey  = "cpus"
)

// topRows is how many rows of a breakdown a report shows.
const topRows = 10

// explainBlocks are the telemetry sections of d, whose recording s
// summarizes, in reading order.
func explainBlocks(d *result.Document, s telemetry.Summary) []block {
	rec := d.Telemetry
	var out []block
	if notes := explainNotes(d, s); len(notes) > 0 {
		out = append(out, block{Heading: "What the telemetry says first", Notes: notes})
	}
	if s.DB != nil {
		out = append(out, oneLine(d, s), block{Heading: "Load profile", Table: loadProfile(d, s)})
	}
	if len(s.Waits) > 0 {
		out = append(out, block{Heading: "Top wait events", Table: waitTable(s), key: waitsKey})
	}
	if len(s.Background) > 0 {
		out = append(out, block{Heading: "Background processes", Table: backgroundTable(s)})
	}
	if b, ok := replicaBlock(d, s); ok {
		out = append(out, b)
	}
	if b, ok := memberBlock(d, s); ok {
		out = append(out, b)
	}
	if b, ok := nodeBlock(d, s); ok {
		out = append(out, b)
	}
	if rec.DB != nil {
		for _, t := range rec.DB.Tables {
			if len(t.Rows) > 0 {
				out = append(out, block{Heading: t.Title, Table: breakdown(t, s.Seconds)})
			}
		}
	}
	if s.Host != nil {
		out = append(out, block{Heading: "Host CPUs", Table: cpuTable(rec.Host, s.Host), key: cpusKey})
		if len(s.Host.Disks) > 0 {
			out = append(out, block{Heading: "Host disks", Table: diskTable(rec.Host.Facts, s.Host)})
		}
	}
	return append(out, settingsBlock(rec))
}

// settingsBlock holds what explains a result without being measured: the
// host's tunables and the database's settings that are not defaults.
func settingsBlock(rec *telemetry.Recording) block {
	var host, db [][2]string
	if h := rec.Host; h != nil {
		f := h.Facts
		for _, kv := range [][2]string{
			{"transparent huge pages", f.TransparentHuge}, {"vm.nr_hugepages", strconv.FormatInt(f.NrHugepages, 10)},
			{"cpufreq driver", f.CpufreqDriver}, {"cpufreq governor", f.CpufreqGovernor},
			{"cpuidle driver", f.CpuidleDriver}, {"cpuidle governor", f.CpuidleGovernor}, {"frequency from", f.FrequencySource},
			{"data", f.DataPath}, {"data device", f.DataDevice}, {"IO scheduler", f.DataDeviceSched},
			{"server memory limit", bytesIEC(f.ServerMemoryLimit)}, {"server CPUs", f.ServerCPUs}, {"client CPUs", f.ClientCPUs},
		} {
			if kv[1] != "" {
				host = append(host, kv)
			}
		}
	}
	if rec.DB != nil {
		for _, k := range slices.Sorted(maps.Keys(rec.DB.Settings)) {
			db = append(db, [2]string{k, rec.DB.Settings[k]})
		}
	}
	return kvBlock("Settings", []kvGroup{{"Host", host}, {"Database settings", db}},
		"What the host and the database were set to during the run; of a server's settings, those not at their defaults.")
}

// explainNotes are the facts a reader should weigh before the figures:
// traps (a powersave governor, a saturated client, steal), whether the
// data fits the server's memory, and what could not be recorded.
func explainNotes(d *result.Document, s telemetry.Summary) []string {
	rec := d.Telemetry
	var notes []string
	if h := rec.Host; h != nil {
		if h.Facts.CpufreqGovernor == "powersave" {
			notes = append(notes, "The cpufreq governor is powersave: the CPUs were held at low clocks, which can make a single-threaded test several times slower. Set it to performance for a study.")
		}
		if s.Host != nil {
			notes = append(notes, hostNotes(d, h.Facts, s.Host)...)
		}
		if n := fitNote(h.Facts, d.Host.MemoryBytes, s); n != "" {
			notes = append(notes, n)
		}
	}
	if n := costNote(rec); n != "" {
		notes = append(notes, n)
	}
	for _, k := range slices.Sorted(maps.Keys(rec.Unavailable)) {
		notes = append(notes, fmt.Sprintf("Not recorded, %s: %s.", strings.ReplaceAll(k, "_", " "), strings.TrimSuffix(rec.Unavailable[k], ".")))
	}
	return notes
}

func hostNotes(d *result.Document, f telemetry.HostFacts, h *telemetry.HostSummary) []string {
	var notes []string
	cpus := max(f.OnlineCPUs, d.Host.CPUs, 1)
	clientCores := h.Client * float64(cpus) / 100
	switch ps := result.ConfigInt(d.Config, "client_cpus"); {
	case ps <= 0 || clientCores < 0.9*float64(ps):
	case f.Embedded:
		notes = append(notes, fmt.Sprintf("The client, with the database engine inside it, used %.2f CPUs against the %d its Go runtime may run on at once (the engine's own threads come on top): the run was bound by them; --client-cpus allows more.", clientCores, ps))
	default:
		notes = append(notes, fmt.Sprintf("The client was saturated: it used %.2f of the %d CPUs it may use. The database may have been waiting for the client; raise --client-cpus or move the client.", clientCores, ps))
	}
	if h.CPU.Busy() >= 90 {
		notes = append(notes, fmt.Sprintf("The host's CPUs were %.0f%% busy: the run was CPU-bound.", h.CPU.Busy()))
	}
	if h.CPU.Steal >= 5 {
		notes = append(notes, fmt.Sprintf("The hypervisor took %.1f%% of the CPU time (steal): another guest competed for the host, so figures may not repeat.", h.CPU.Steal))
	}
	return notes
}

// fitNote says whether the database fits the memory its server may use:
// a confined server's limit, else the host's memory.
func fitNote(f telemetry.HostFacts, hostMemory int64, s telemetry.Summary) string {
	if s.DB == nil {
		return ""
	}
	size, ok := s.DB.Gauges[telemetry.DatabaseBytes]
	if !ok || size <= 0 {
		return ""
	}
	limit, what := f.ServerMemoryLimit, "the server's memory limit"
	if limit <= 0 {
		limit, what = hostMemory, "the host's memory"
	}
	if limit <= 0 {
		return ""
	}
	verb := "fits in"
	if size > float64(limit) {
		verb = "does not fit in"
	}
	n := fmt.Sprintf("The database (%s) %s %s (%s)", bytesIEC(int64(size)), verb, what, bytesIEC(limit))
	if s.Host != nil && s.Host.PeakServerCgroup > 0 {
		n += fmt.Sprintf("; the server's cgroup used up to %s, page cache included", bytesIEC(s.Host.PeakServerCgroup))
	}
	return n + "."
}

// sessions is how many sessions a run drove: its pool's (--connections),
// else its virtual users, or, for a workload that runs its own sessions,
// its --sessions (the same flag's other name).
func sessions(cfg map[string]any) int {
	if n := result.ConfigInt(cfg, "connections"); n > 0 {
		return n
	}
	if n := result.ConfigInt(cfg, "vus"); n > 0 {
		return n
	}
	return result.ConfigInt(cfg, "sessions")
}

// profileRow is one line of the load profile.
type profileRow struct {
	key, label string
	bytes      bool
}

var profile = []profileRow{
	{telemetry.LogicalReads, "logical reads (blocks)", false},
	{telemetry.PhysicalReads, "physical reads (cache misses)", false},
	{telemetry.BlockWrites, "block writes", false},
	{telemetry.WALBytes, "WAL / redo", true},
	{telemetry.WALRecords, "WAL records", false},
	{telemetry.Commits, "commits", false},
	{telemetry.Rollbacks, "rollbacks", false},
	{telemetry.ReadTimeMs, "read time (ms)", false},
	{telemetry.TempBytes, "temp files", true},
	{telemetry.Checkpoints, "checkpoints", false},
	{telemetry.Deadlocks, "deadlocks", false},
}

// loadProfile is AWR's load profile: each counter per second and per
// database transaction, then the source's own counters, and the cache's
// hit ratio (AWR's instance efficiency).
func loadProfile(d *result.Document, s telemetry.Summary) *table {
	db := s.DB
	txs := db.Deltas[telemetry.Commits] + db.Deltas[telemetry.Rollbacks]
	per := "database transaction"
	if txs <= 0 {
		per = "completed transaction (client side)"
		for _, t := range d.Transactions {
			txs += float64(t.Count)
		}
	}
	t := &table{Head: heads("", "#per second", "#per transaction", "#over the window"),
		Caption: fmt.Sprintf("The database's own counters over the %.1f s measured window, per second and per %s.", s.Seconds, per)}
	add := func(label string, bytes bool, delta, rate float64) {
		f := fmtCount
		if bytes {
			f = human.Bytes
		}
		perTx := "—"
		if txs > 0 {
			perTx = f(delta / txs)
		}
		t.Rows = append(t.Rows, row{Cells: []cell{{Text: label}, num(f(rate)), num(perTx), num(f(delta))}})
	}
	known := map[string]bool{}
	for _, p := range profile {
		known[p.key] = true
		if delta, ok := db.Deltas[p.key]; ok {
			add(p.label, p.bytes, delta, db.Rates[p.key])
		}
	}
	for _, k := range slices.Sorted(maps.Keys(db.Deltas)) {
		if !known[k] {
			add(k, strings.HasSuffix(k, "_bytes"), db.Deltas[k], db.Rates[k])
		}
	}
	if db.HitPct != nil {
		t.Rows = append(t.Rows, row{Cells: []cell{{Text: "buffer hit %"}, num(fmt.Sprintf("%.2f%%", *db.HitPct)), num(""), num("")}})
	}
	if size, ok := db.Gauges[telemetry.DatabaseBytes]; ok {
		t.Rows = append(t.Rows, row{Cells: []cell{{Text: "database size"}, num(""), num(""), num(bytesIEC(int64(size)))}})
	}
	return t
}

func waitTable(s telemetry.Summary) *table {
	t := &table{Head: heads("wait class", "event", "#% of DB time", "#avg active sessions", "#samples"),
		Caption: fmt.Sprintf("Active sessions sampled over the measured window (%.2f active on average). A session on CPU waits on nothing: its class is CPU.", s.ActiveSessions)}
	if len(s.Background) > 0 {
		t.Caption += " DB time is the foreground sessions' alone, those that run the workload's statements; the server's own processes are in the next table."
	}
	for i, w := range s.Waits {
		if i == topRows {
			break
		}
		t.Rows = append(t.Rows, row{Cells: waitCells(w)})
	}
	return t
}

// backgroundTable is what the server's own processes were seen doing
// (a checkpointer writing or sleeping between writes, an autovacuum
// worker), as a share of the sampler's readings: not database time.
func backgroundTable(s telemetry.Summary) *table {
	t := &table{Head: heads("process", "wait class", "event", "#% of samples", "#avg active", "#samples")}
	t.Caption = "The server's own processes, sampled with the sessions and kept out of DB time: % of samples is how often one such process was seen in that state (100% = one of them all the time). Idle processes waiting for work are not counted."
	for i, w := range s.Background {
		if i == topRows {
			t.Caption += fmt.Sprintf(" The top %d of %d rows.", topRows, len(s.Background))
			break
		}
		t.Rows = append(t.Rows, row{Cells: append([]cell{{Text: w.Backend}}, waitCells(w.Wait)...)})
	}
	return t
}

// waitCells are a wait's class, event, share, average and count.
func waitCells(w telemetry.Wait) []cell {
	_, event, _ := strings.Cut(w.Name, "/")
	return []cell{{Text: w.Class()}, {Text: event},
		num(fmt.Sprintf("%.1f%%", w.Pct)), num(fmt.Sprintf("%.2f", w.AAS)), num(strconv.Itoa(w.Count))}
}

// breakdown is one of the source's tables over the window, its rows
// ordered by the table's sort column, the largest first.
func breakdown(tb telemetry.Table, seconds float64) *table {
	rows := slices.Clone(tb.Rows)
	slices.SortStableFunc(rows, func(a, b telemetry.Row) int {
		return cmp.Compare(valueAt(b.Values, tb.Sort), valueAt(a.Values, tb.Sort))
	})
	hasText := false
	for _, r := range rows {
		hasText = hasText || r.Text != ""
	}
	var h []string
	h = append(h, tb.Labels...)
	for _, c := range tb.Columns {
		l := c.Label
		if c.Unit != "" {
			l += " (" + c.Unit + ")"
		}
		h = append(h, "#"+l)
	}
	if hasText {
		h = append(h, "text")
	}
	t := &table{Class: "wide", Head: heads(h...)}
	t.Caption = fmt.Sprintf("Over the %.1f s measured window", seconds)
	if len(rows) > topRows {
		t.Caption += fmt.Sprintf("; the top %d of %d rows", topRows, len(rows))
		rows = rows[:topRows]
	}
	t.Caption += "."
	for _, r := range rows {
		var c []cell
		for _, l := range r.Labels {
			c = append(c, cell{Text: l})
		}
		for i, v := range r.Values {
			f := fmtCount
			if i < len(tb.Columns) && tb.Columns[i].Unit == "bytes" {
				f = human.Bytes
			}
			c = append(c, num(f(v)))
		}
		if hasText {
			c = append(c, cell{Text: shorten(r.Text, 90), Title: r.Text})
		}
		t.Rows = append(t.Rows, row{Cells: c})
	}
	return t
}

func valueAt(v []float64, i int) float64 {
	if i < len(v) {
		return v[i]
	}
	return 0
}

func shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}

// cpuTable is turbostat's view of the window: per CPU, busy %, the clock
// while busy and on average, /proc/stat's split and the idle time by
// C-state. Each row's usr, sys, irq, steal, iowait and idle columns add
// up to 100%: a CPU waiting on IO is idle, so cpuidle's residency holds
// the iowait time too, and the idle columns are what is left of the
// residency once iowait is shown on its own.
func cpuTable(h *telemetry.HostRecord, s *telemetry.HostSummary) *table {
	head := []string{"CPU", "#Busy%", "#Bzy_MHz", "#Avg_MHz", "#usr%", "#sys%", "#irq%", "#steal%", "#iowait%"}
	idle := []string{"idle"}
	if len(h.CStates) > 0 {
		idle = h.CStates
	}
	for _, c := range idle {
		head = append(head, "#"+c+"%")
	}
	t := &table{Class: "wide", Head: heads(head...)}
	line := func(name string, c telemetry.CPUTimes, bzy, avg float64, states []float64) row {
		cells := []cell{{Text: name}, num(pct1(c.Busy())), num(mhz(bzy)), num(mhz(avg)),
			num(pct1(c.User)), num(pct1(c.System)), num(pct1(c.IRQ)), num(pct1(c.Steal)), num(pct1(c.IOWait))}
		split := []float64{c.Idle}
		if len(h.CStates) > 0 {
			split = idleSplit(c.Idle, states, len(h.CStates))
		}
		for i := range idle {
			if split == nil {
				cells = append(cells, num("—"))
			} else {
				cells = append(cells, num(pct1(split[i])))
			}
		}
		return row{Cells: cells}
	}
	t.Rows = append(t.Rows, line("all", s.CPU, meanOf(s.BusyMHz), meanOf(s.AvgMHz), meanEach(s.CStates)))
	for i, c := range s.PerCPU {
		var states []float64
		if i < len(s.CStates) {
			states = s.CStates[i]
		}
		t.Rows = append(t.Rows, line(strconv.Itoa(i), c, valueAt(s.BusyMHz, i), valueAt(s.AvgMHz, i), states))
	}
	src := h.Facts.FrequencySource
	if src == "" {
		src = "nowhere: this host offers no source of CPU clocks"
	}
	t.Caption = fmt.Sprintf("Per CPU over the measured window, as turbostat shows it. Busy%% (usr + sys + irq) and the split from /proc/stat, whose usr, sys, irq, steal, iowait and idle columns add up to 100%%; clocks from %s.", src)
	if len(h.CStates) > 0 {
		t.Caption += " The idle time is split by C-state in the proportions cpuidle measured; cpuidle's residency also holds the iowait time, which is shown once, in its own column."
	}
	if server, ok := s.ServerCPU(); ok && len(s.Nodes) > 0 {
		t.Caption += fmt.Sprintf(" Of all CPUs, the client used %.1f%% and the server's %s' processes %.1f%% (see Cluster nodes).", s.Client, human.Count(len(s.Nodes), "node"), server)
	} else if ok {
		t.Caption += fmt.Sprintf(" Of all CPUs, the client used %.1f%% and the server's processes %.1f%%.", s.Client, server)
	} else {
		t.Caption += fmt.Sprintf(" Of all CPUs, the client used %.1f%%; the server's processes are not on this host or not known.", s.Client)
	}
	return t
}

// idleSplit is a CPU's idle time (iowait apart) split over its n
// C-states in the proportions of their residency; nil where none was
// measured.
func idleSplit(idle float64, residency []float64, n int) []float64 {
	var total float64
	for i := range n {
		total += valueAt(residency, i)
	}
	if total <= 0 {
		return nil
	}
	out := make([]float64, n)
	for i := range out {
		out[i] = idle * valueAt(residency, i) / total
	}
	return out
}

func diskTable(f telemetry.HostFacts, s *telemetry.HostSummary) *table {
	t := &table{Class: "wide", Head: heads("device", "#r/s", "#w/s", "#rMB/s", "#wMB/s", "#r_await ms", "#w_await ms", "#%util"),
		Caption: "Block devices over the measured window, as iostat -x shows them; await is the mean time an IO took, queueing included."}
	for _, d := range s.Disks {
		name := d.Device
		if d.Device == f.DataDevice {
			name += " (data)"
		}
		t.Rows = append(t.Rows, row{Cells: []cell{{Text: name}, num(fmt.Sprintf("%.1f", d.ReadIOPS)), num(fmt.Sprintf("%.1f", d.WriteIOPS)),
			num(fmt.Sprintf("%.2f", d.ReadMBps)), num(fmt.Sprintf("%.2f", d.WriteMBps)), num(ms(d.ReadAwaitMs)), num(ms(d.WriteAwaitMs)),
			num(pct1(d.UtilPct))}})
	}
	return t
}

// fmtCount prints a whole number as one, with thousands separators, and
// a fraction at a precision fitting its size.
func fmtCount(v float64) string {
	if v == math.Trunc(v) {
		return human.Thousands(v)
	}
	return fmtValue(v)
}

func pct1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

func mhz(v float64) string {
	if v <= 0 || math.IsNaN(v) {
		return "—"
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

func meanOf(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	return result.Mean(v)
}

func meanEach(rows [][]float64) []float64 {
	if len(rows) == 0 {
		return nil
	}
	out := make([]float64, len(rows[0]))
	for _, r := range rows {
		for i := range out {
			out[i] += valueAt(r, i) / float64(len(rows))
		}
	}
	return out
}

// explained is one of telemetry.Explains' figures of s, by key.
func explained(s telemetry.Summary, key string) (float64, bool) {
	for _, e := range telemetry.Explains {
		if e.Key == key {
			return e.Value(s)
		}
	}
	return 0, false
}

// oneLine is the run in one row, shaped like the one-line summary the
// SLOB method's tools print from an AWR report: sessions, the database's
// CPU, its logical and physical reads and writes, redo, read latency and
// the top wait; with the reads per CPU core, the figure the method
// compares platforms by.
func oneLine(d *result.Document, s telemetry.Summary) block {
	opt := func(key string, f func(float64) string) cell {
		if v, ok := explained(s, key); ok {
			return num(f(v))
		}
		return num("—")
	}
	mb := func(v float64) string { return fmt.Sprintf("%.1f", v/1e6) }
	db := s.DB
	dbCPU, readUs, diskMB, diskMs, top := num("—"), num("—"), num("—"), num("—"), cell{Text: "—"}
	if host, busy := s.Cores(); busy > 0 {
		dbCPU = num(fmt.Sprintf("%.2f", busy))
	} else if h := d.Telemetry.Host; h != nil && h.Facts.Embedded && s.Host != nil {
		// The engine runs in the client's process: its CPU is the client's.
		dbCPU = num(fmt.Sprintf("%.2f", s.Host.Client*host/100))
	}
	if t, ok := db.Deltas[telemetry.ReadTimeMs]; ok && db.Deltas[telemetry.PhysicalReads] > 0 {
		readUs = num(fmt.Sprintf("%.0f", t*1000/db.Deltas[telemetry.PhysicalReads]))
	}
	if s.Host != nil && s.Host.Data != nil {
		diskMB = num(fmt.Sprintf("%.1f", s.Host.Data.ReadMBps))
		if s.Host.Data.ReadIOPS > 0 {
			diskMs = num(fmt.Sprintf("%.2f", s.Host.Data.ReadAwaitMs))
		}
	}
	if len(s.Waits) > 0 {
		top = cell{Text: fmt.Sprintf("%s %.0f%%", s.Waits[0].Name, s.Waits[0].Pct)}
	}
	t := &table{Class: "wide",
		Head: heads("sessions", "#elapsed s", "#DB CPU", "#LIO/s", "#PREADS/s", "#disk reads/s", "#disk read MB/s",
			"#PWRITES/s", "#redo MB/s", "#read µs (DB)", "#read ms (disk)", "top wait"),
		Rows: []row{{Cells: []cell{num(strconv.Itoa(sessions(d.Config))), num(fmt.Sprintf("%.1f", s.Seconds)), dbCPU,
			opt("logical_reads_per_s", fmtCount), opt("physical_reads_per_s", fmtCount), opt("read_iops", fmtCount), diskMB,
			opt("block_writes_per_s", fmtCount), opt("wal_bytes_per_s", mb), readUs, diskMs, top}}},
		Caption: "DB CPU is the CPUs the server's processes kept busy (a cluster's: its nodes' on this host; an embedded database's: the client's); LIO and PREADS are the database's logical reads and " +
			"cache misses, PWRITES its block writes; read µs (DB) is its own read time per miss, read ms (disk) the data disk's."}
	b := block{Heading: "In one line", Table: t}
	host, busy := s.Cores()
	if v, ok := explained(s, "physical_reads_per_core"); ok {
		n := fmt.Sprintf("Per CPU core of the host (%.0f): %s cache misses/s", host, fmtCount(v))
		if l, ok := explained(s, "logical_reads_per_core"); ok {
			n += fmt.Sprintf(" and %s logical reads/s", fmtCount(l))
		}
		if v, ok := explained(s, "physical_reads_per_server_core"); ok {
			n += fmt.Sprintf("; per CPU the server kept busy (%.2f): %s cache misses/s", busy, fmtCount(v))
		}
		b.Notes = append(b.Notes, n+".")
	}
	if n := diskShareNote(s); n != "" {
		b.Notes = append(b.Notes, n)
	}
	return b
}

// diskShareNote sets the database's cache misses against the data disk's
// reads. The device counts every process's reads and the misses only the
// database's, so neither is a share of the other: fewer device reads than
// misses bound what the disk served (the OS page cache served at least
// the rest), and more leave a remainder the database's counters cannot
// account for, which is named rather than put down to it.
func diskShareNote(s telemetry.Summary) string {
	if s.DB == nil || s.Host == nil || s.Host.Data == nil {
		return ""
	}
	misses, reads := s.DB.Rates[telemetry.PhysicalReads], s.Host.Data.ReadIOPS
	if misses <= 0 {
		return ""
	}
	n := fmt.Sprintf("The database missed its cache %s times/s; the data disk (%s) read %s times/s", fmtCount(misses), s.Host.Data.Device, fmtCount(reads))
	if reads <= misses {
		return n + fmt.Sprintf(": at most %s%% of the misses reached the disk, as the device counts every process's reads, and the OS page cache served at least the other %s/s.",
			atMost(reads/misses*100), fmtCount(misses-reads))
	}
	return n + fmt.Sprintf(". %s reads/s (%.0f%% of the device's) are not the database's misses and are not put down to it: other processes on the device, "+
		"or reads the database's counters leave out (its log, temp files, the OS's read-ahead). The misses may all have reached the disk, or some been served by the OS page cache.",
		fmtCount(reads-misses), (reads-misses)/reads*100)
}

// atMost is a bound in percent as a person reads it: whole numbers, and
// under 1% rounded up to a tenth, so that a bound above 0 never prints 0.
func atMost(pct float64) string {
	if pct > 0 && pct < 1 {
		return strconv.FormatFloat(math.Ceil(pct*10)/10, 'f', 1, 64)
	}
	return strconv.FormatFloat(pct, 'f', 0, 64)
}

// costNote says what the telemetry's sampling cost the client, against
// all the CPU the client used over the same recording, so that a reader
// can see it did not slow the client down.
func costNote(rec *telemetry.Recording) string {
	if rec.Cost == nil || rec.Host == nil || len(rec.Host.Samples) == 0 {
		return ""
	}
	cores := float64(max(rec.Host.Facts.OnlineCPUs, len(rec.Host.Samples[0].PerCPU), 1))
	var client, span float64
	for _, h := range rec.Host.Samples {
		client += h.Client / 100 * cores * h.DT
		span += h.DT
	}
	c := rec.Cost
	used := c.Samples + c.Sessions
	if client <= 0 {
		return ""
	}
	return fmt.Sprintf("Telemetry's own sampling used %.0f ms of the client's CPU over %.0f s (host and counters %.0f ms, sessions %.0f ms): %.2f%% of the %.2f s the client used.",
		used*1000, span, c.Samples*1000, c.Sessions*1000, used/client*100, client)
}

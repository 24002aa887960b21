package runner

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/telemetry"
	"github.com/spf13/pflag"
)

// Param is one of the runner's own run parameters. This table is the one
// place they are defined: the run command's flags, a sweep spec's checks,
// its time estimate and its execution all read it. A workload's own run
// parameters are its RunFlags.
type Param struct {
	// Name is the spec key; the flag is the same with dashes.
	Name    string
	Default string
	Usage   string
	// Timed marks a parameter of a timed window, which a workload of a
	// fixed amount of work does not take.
	Timed bool
	// Act marks a moment at which the run acts on its system under test:
	// a run that does not set it does not act, and records nothing of it.
	Act bool
	// field is the Options field the parameter sets: *int, *time.Duration
	// or *string.
	field func(o *Options) any
}

// Params are the runner's parameters.
var Params = []Param{
	{Name: "rampup", Default: "10s", Usage: "time over which the virtual users start", Timed: true,
		field: func(o *Options) any { return &o.Rampup }},
	{Name: "duration", Default: "60s", Usage: "measured window", Timed: true,
		field: func(o *Options) any { return &o.Duration }},
	{Name: "vus", Default: "4", Usage: "virtual users, each with its own connection unless --connections pools them (--sessions is another name for it)", Timed: true,
		field: func(o *Options) any { return &o.VUs }},
	{Name: "connections", Default: "0", Usage: "run the virtual users as terminals over a pool of M sessions, each lent for one transaction at a time as a transaction monitor does (0: a session per VU)", Timed: true,
		field: func(o *Options) any { return &o.Connections }},
	{Name: "client_cpus", Default: "0", Usage: "CPUs the client may use at once (default: one per 8 VUs, at most all; GOMAXPROCS in the environment wins)",
		field: func(o *Options) any { return &o.ClientCPUs }},
	{Name: "sample", Default: "1s", Usage: "how often host and database telemetry is sampled",
		field: func(o *Options) any { return &o.Telemetry.Interval }},
	{Name: "lost_after", Default: dbtarget.ReconnectLimit.String(), Usage: "how long the server may stay out of reach, or answer nothing, before the run gives it up, ends and fails (at least 1s)",
		field: func(o *Options) any { return &o.LostAfter }},
	{Name: "failover_at", Default: "0s", Usage: "lose the primary of the run's managed cluster this long after the run starts, as a lost machine would (its postmaster and HA manager killed), and carry on on the node promoted (0: never)", Timed: true, Act: true,
		field: func(o *Options) any { return &o.FailoverAt }},
	{Name: "switchover_at", Default: "0s", Usage: "hand the primary's role of the run's managed cluster to another node, planned, this long after the run starts (0: never)", Timed: true, Act: true,
		field: func(o *Options) any { return &o.SwitchoverAt }},
	{Name: "max_retries", Default: strconv.Itoa(driver.DefaultMaxRetries), Usage: "how many times a transaction the database aborted and asks the client to retry (a serialization failure, a deadlock, a certification conflict) runs again with the same inputs before it counts as aborted (0: never)",
		field: func(o *Options) any { return &o.MaxRetries }},
	{Name: "retry_backoff", Default: driver.DefaultBackoff.Base.String(), Usage: "the wait before a transaction's first retry, doubled for each next one up to --retry-backoff-max, each drawn at random below that (0: retry at once)",
		field: func(o *Options) any { return &o.Backoff.Base }},
	{Name: "retry_backoff_max", Default: driver.DefaultBackoff.Max.String(), Usage: "the longest wait before a retry",
		field: func(o *Options) any { return &o.Backoff.Max }},
	{Name: "isolation", Default: "", Usage: "run every session at this isolation level: read-committed, repeatable-read or serializable (default: the database's own)",
		field: func(o *Options) any { return &o.Isolation }},
	{Name: "node_affinity", Default: RoundRobin, Usage: "on a target of several nodes (a URL with several hosts), which node each virtual user's session goes to: round-robin by VU, or the workload's own key by name (a wrong name is refused with the right one), each node then the VUs of its own keys",
		field: func(o *Options) any { return &o.NodeAffinity }},
	{Name: "stall_after", Default: driver.DefaultStallAfter.String(), Usage: "how long no transaction may end while virtual users wait in one before the run names it a stall; also how long a window's edge waits for the transactions in hand (at least 1s)",
		field: func(o *Options) any { return &o.StallAfter }},
}

// minSample is the shortest telemetry interval: shorter ones would make
// the host's counters (in 10 ms ticks) too coarse to mean anything.
const minSample = 100 * time.Millisecond

// Defaults are the options a run has unless told otherwise.
func Defaults() Options {
	o := Options{Telemetry: telemetry.Config{SessionHz: telemetry.DefaultSessionHz}}
	for _, p := range Params {
		if err := o.Set(p.Name, p.Default); err != nil {
			panic(err) // the table's own defaults
		}
	}
	return o
}

// Lookup finds a parameter by spec key.
func Lookup(name string) (Param, bool) {
	for _, p := range Params {
		if p.Name == name {
			return p, true
		}
	}
	return Param{}, false
}

// FlagName is a spec key as a flag: client_cpus → client-cpus.
func FlagName(key string) string { return strings.ReplaceAll(key, "_", "-") }

// Applies tells whether p is a parameter of a workload whose runs are
// timed (fixedWork false) or a fixed amount of work.
func (p Param) Applies(fixedWork bool) bool { return !p.Timed || !fixedWork }

// AddFlags binds the parameters that apply to o's fields, with o's
// current values as the defaults.
func AddFlags(fs *pflag.FlagSet, o *Options, fixedWork bool) {
	for _, p := range Params {
		if !p.Applies(fixedWork) {
			continue
		}
		switch f := p.field(o).(type) {
		case *int:
			fs.IntVar(f, FlagName(p.Name), *f, p.Usage)
		case *time.Duration:
			fs.DurationVar(f, FlagName(p.Name), *f, p.Usage)
		case *string:
			fs.StringVar(f, FlagName(p.Name), *f, p.Usage)
		}
	}
}

// Set parses value into o's field for parameter name and checks it.
func (o *Options) Set(name, value string) error {
	p, ok := Lookup(name)
	if !ok {
		return fmt.Errorf("no such run parameter %q", name)
	}
	switch f := p.field(o).(type) {
	case *int:
		n, err := strconv.Atoi(value)
		if err != nil {
			return fmt.Errorf("want a whole number, got %q", value)
		}
		*f = n
	case *time.Duration:
		d, err := time.ParseDuration(value)
		if err != nil {
			return fmt.Errorf("want a duration such as 30s or 5m, got %q", value)
		}
		*f = d
	case *string:
		*f = value
	}
	return o.check(name)
}

// Validate reports the first option a user must fix, of those that apply
// to a timed run or to a run of a fixed amount of work.
func (o Options) Validate(fixedWork bool) error {
	for _, p := range Params {
		if !p.Applies(fixedWork) {
			continue
		}
		if err := o.check(p.Name); err != nil {
			return exitcode.Userf("--%s %v", FlagName(p.Name), err)
		}
	}
	if fixedWork {
		return nil
	}
	return o.checkPool()
}

// checkPool checks --connections against the other options: a value
// alone is checked by check, as a sweep spec sets it.
func (o Options) checkPool() error {
	switch {
	case o.Connections > o.VUs:
		return exitcode.Userf("--connections %d is more than --vus %d: a session is lent to one terminal at a time, so at most one each", o.Connections, o.VUs)
	case o.Connections > 0 && o.Beside > 0:
		return exitcode.Userf("--connections does not run beside --with yet: leave one of them out")
	}
	return nil
}

// check validates one parameter's value.
func (o Options) check(name string) error {
	switch {
	case name == "client_cpus" && o.ClientCPUs < 0:
		return fmt.Errorf("must not be negative, got %d", o.ClientCPUs)
	// The Go runtime makes a thread for each, and quits past 10,000.
	case name == "client_cpus" && o.ClientCPUs > runtime.NumCPU():
		return fmt.Errorf("must be at most %d, the CPUs this machine has, got %d", runtime.NumCPU(), o.ClientCPUs)
	case name == "connections" && o.Connections < 0:
		return fmt.Errorf("must not be negative, got %d", o.Connections)
	case name == "vus" && o.VUs < 0, name == "vus" && o.VUs == 0 && o.Beside == 0:
		return fmt.Errorf("must be at least 1 (0 only beside --with, to run those alone), got %d", o.VUs)
	case name == "duration" && o.Duration <= 0:
		return fmt.Errorf("must be positive, got %s", o.Duration)
	case name == "rampup" && o.Rampup < 0:
		return fmt.Errorf("must not be negative, got %s", o.Rampup)
	// 0s too: it would give a server up, or name a stall, at once, and the
	// driver would take it for its default.
	case name == "lost_after" && o.LostAfter < time.Second:
		return fmt.Errorf("must be at least 1s, got %s", o.LostAfter)
	case name == "max_retries" && o.MaxRetries < 0:
		return fmt.Errorf("must be 0 or more, got %d", o.MaxRetries)
	case name == "retry_backoff" && o.Backoff.Base < 0, name == "retry_backoff_max" && o.Backoff.Max < 0:
		return fmt.Errorf("must not be negative")
	case name == "isolation":
		_, err := dbtarget.ParseIsolation(o.Isolation)
		if err != nil {
			return fmt.Errorf("%q: want read-committed, repeatable-read or serializable", o.Isolation)
		}
	case name == "node_affinity" && o.NodeAffinity == "":
		return fmt.Errorf("want %s or the workload's own key", RoundRobin)
	case name == "stall_after" && o.StallAfter < time.Second:
		return fmt.Errorf("must be at least 1s, got %s", o.StallAfter)
	case (name == "failover_at" || name == "switchover_at") && (o.FailoverAt < 0 || o.SwitchoverAt < 0):
		return fmt.Errorf("must be a moment after the run starts, not negative")
	case (name == "failover_at" || name == "switchover_at") && max(o.FailoverAt, o.SwitchoverAt) >= o.Rampup+o.Duration && o.Duration > 0:
		return fmt.Errorf("is past the run's end, %s after it starts", o.Rampup+o.Duration)
	case name == "sample" && o.Telemetry.Interval != 0 && o.Telemetry.Interval < minSample:
		return fmt.Errorf("must be at least %s, got %s", minSample, o.Telemetry.Interval)
	}
	return nil
}

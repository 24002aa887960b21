package workload

import (
	"context"
	"fmt"
	"math"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/human"
)

// Keys of the marks that MarkServer reads.
const (
	// ServerStarted is when the server started, in microseconds since the
	// epoch, where a restart resets its counters.
	ServerStarted = "server_started_us"
	// Xacts is the database's committed+rolled-back transaction counter.
	Xacts = "xacts"
)

// MarkServer is a mark of v with what every workload's mark reads from
// the target itself: which server it was read on (a dbtarget.Located),
// when that server started (a dbtarget.Restartable) and its transaction
// counter, where it keeps one. read, if not nil, is the workload's own part
// of the mark, on own, its session in the measured database, which adds
// its figures to v. It runs before the counter is read, which then holds
// its transactions published (own is flushed first) and leaves out all
// that own has run, so that the marks never count as the workload's, at
// either edge.
func MarkServer(ctx context.Context, t dbtarget.Target, v map[string]int64, own *Conn, read func() error) (Mark, error) {
	m := Mark{Values: v}
	if l, ok := t.(dbtarget.Located); ok {
		at, err := l.ServerAddr(ctx)
		if err != nil {
			return Mark{}, fmt.Errorf("read which server answers: %w", err)
		}
		m.Server = at
	}
	if rs, ok := t.(dbtarget.Restartable); ok {
		at, err := rs.Started(ctx)
		if err != nil {
			return Mark{}, fmt.Errorf("read when the server started: %w", err)
		}
		v[ServerStarted] = at.UnixMicro()
	}
	if read != nil {
		if err := read(); err != nil {
			return Mark{}, err
		}
	}
	var reads int64
	if own != nil {
		if err := own.Flush(ctx); err != nil {
			return Mark{}, fmt.Errorf("publish the mark's own reads: %w", err)
		}
		reads = own.reads
	}
	n, ok, err := t.Xacts(ctx)
	if err != nil {
		return Mark{}, fmt.Errorf("read transaction counter: %w", err)
	}
	if ok {
		v[Xacts] = n - reads
	}
	return m, nil
}

// Gap says why a rate has no database side.
type Gap uint8

const (
	// Counted: there is no gap, the rate is there.
	Counted Gap = iota
	// NoCounter: the database keeps no such counter.
	NoCounter
	// Reset: the counter was reset during the window.
	Reset
	// Lost: the server was lost before the window's end could be read.
	Lost
	// Unread: the window's end was not read, the server still there.
	Unread
	// Shared: the counter counts other workloads' work too (--with).
	Shared
	// Elsewhere: the window's edges were read on two servers (a failover
	// between them), and the counter is each server's own.
	Elsewhere
	// Behind: the window's edges were read on two servers, and the count
	// read from the tables is lower on the second: it lacks changes the
	// first had.
	Behind
)

// Rated is a rate between two marks, or the gap that says why there is
// none, with the servers the two were read on where they are two.
type Rated struct {
	Value *float64
	Gap   Gap
	// From and To are the servers the start and the end were read on,
	// set only where they differ.
	From, To string
}

// Times is r with its rate scaled by k: per minute from per second.
func (r Rated) Times(k float64) Rated {
	if r.Value != nil {
		v := *r.Value * k
		r.Value = &v
	}
	return r
}

// LessRetries is r, a transaction counter's rate per second over a
// window of seconds, less the attempts of res's window that did not
// complete: each retried attempt, and the last attempt of each abort (a
// transaction still failing after its last retry), which the server ran
// and rolled back, where the client counts only the transactions that
// completed, once each. A line says so where there were any; "" where not.
func (r Rated) LessRetries(res *driver.Result, seconds float64) (Rated, string) {
	var retries, aborts int64
	for _, tx := range res.Tx {
		retries, aborts = retries+tx.Retries, aborts+tx.Aborts
	}
	if r.Value == nil || retries+aborts == 0 || seconds <= 0 {
		return r, ""
	}
	v := *r.Value - float64(retries+aborts)/seconds
	r.Value = &v
	return r, fmt.Sprintf("the database's transaction counter is taken less the %s attempts the client retried and the %s aborts' last ones, which the server ran and rolled back: the client counts a transaction once, whatever its attempts",
		human.Thousands(float64(retries)), human.Thousands(float64(aborts)))
}

// Rate is key's growth per second between two marks. It is none where
// either mark lacks the key, where the end could not be read (the server
// was lost, or the run stopped first), where the transaction counter
// counts other workloads run beside this one, or where the counter was
// reset: PostgreSQL forgets its statistics when it recovers from a crash,
// so a counter kept per life of the server (perLife) gives no rate over a
// window in which it restarted, and pg_stat_reset() sends any such counter
// backwards. Nor does one read on two servers, the window's start on one
// and its end on another (a failover between): each keeps its own. Table
// data survives all three, replication carrying it from server to server,
// so a count read from it is not perLife, and holds across two servers
// unless the second lacks what the first had.
func Rate(start, end Mark, key string, perLife bool) Rated {
	switch {
	case end.Lost:
		return Rated{Gap: Lost}
	case start.Unread || end.Unread:
		return Rated{Gap: Unread}
	case key == Xacts && (start.Shared || end.Shared):
		return Rated{Gap: Shared}
	}
	a, okA := start.Values[key]
	b, okB := end.Values[key]
	seconds := end.At - start.At
	if !okA || !okB || seconds <= 0 {
		return Rated{Gap: NoCounter}
	}
	var r Rated
	if start.Server != "" && end.Server != "" && start.Server != end.Server {
		r.From, r.To = start.Server, end.Server
		switch {
		case perLife:
			r.Gap = Elsewhere
			return r
		case b < a:
			r.Gap = Behind
			return r
		}
	}
	if b < a || perLife && start.Values[ServerStarted] != end.Values[ServerStarted] {
		r.Gap = Reset
		return r
	}
	n := float64(b-a) / seconds
	r.Value = &n
	return r
}

// Agreement says how far apart a rate's two sides are, or why there is
// only the client's, and which servers the database's side was read on
// where they are two; the figures themselves are in the metrics table.
func Agreement(name string, r Rated, client float64) string {
	read := fmt.Sprintf("the window's start was read on %s and its end on %s, another server", r.From, r.To)
	switch {
	case r.Gap == Lost:
		return name + ": client side only, over the seconds the server was up; the server was lost, so the database's counters could not be read at the window's end"
	case r.Gap == Shared:
		return name + ": client side only; the database's transaction counter counts the workloads run beside this one (--with) too"
	case r.Gap == Unread:
		return name + ": client side only; the database's counters were not read at the window's edges (the run's notes say why)"
	case r.Gap == Elsewhere:
		return name + ": client side only; " + read + ", whose counter is its own"
	case r.Gap == Behind:
		return name + ": client side only; " + read + ", whose tables count less than the first's did: it lacks changes the first had"
	case r.Gap == Reset:
		return name + ": client side only; the database's counter was reset during the window, by a server restart or a statistics reset, so it gives no rate"
	case r.Value == nil:
		return name + ": client side only; the database keeps no counter for it"
	}
	db := *r.Value
	diff := 0.0
	if db != 0 {
		diff = (client - db) / db * 100
	}
	note := ""
	if math.Abs(diff) > Tolerance*100 {
		// The document's headline line says which side stands, and why.
		note = fmt.Sprintf(" (more than the %g%% within which they agree)", Tolerance*100)
	}
	line := fmt.Sprintf("%s: the client's figure differs from the database's by %+.2f%%%s", name, diff, note)
	switch {
	case r.From != "" && note != "":
		line += "; " + read + ": its tables hold what replication carried to it, and the client counted more, which it never received"
	case r.From != "":
		line += "; " + read + ": a count read from the tables holds across the two, since replication carries table data"
	}
	return line
}

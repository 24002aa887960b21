package workload

import (
	"context"
	"fmt"
	"math"

	"github.com/dbrig/dbrig/internal/dbtarget"
)

// Keys of the marks that MarkServer reads.
const (
	// ServerStarted is when the server started, in microseconds since the
	// epoch, where a restart resets its counters.
	ServerStarted = "server_started_us"
	// Xacts is the database's committed+rolled-back transaction counter.
	Xacts = "xacts"
)

// MarkServer adds to v what every workload's mark reads from the target
// itself: when its server started (a dbtarget.Restartable) and its
// transaction counter, where it keeps one. read, if not nil, is the
// workload's own part of the mark, on own, its session in the measured
// database. It runs before the counter is read, which then holds its
// transactions published (own is flushed first) and leaves out all that
// own has run, so that the marks never count as the workload's, at
// either edge.
func MarkServer(ctx context.Context, t dbtarget.Target, v map[string]int64, own *Conn, read func() error) error {
	if rs, ok := t.(dbtarget.Restartable); ok {
		at, err := rs.Started(ctx)
		if err != nil {
			return fmt.Errorf("read when the server started: %w", err)
		}
		v[ServerStarted] = at.UnixMicro()
	}
	if read != nil {
		if err := read(); err != nil {
			return err
		}
	}
	var reads int64
	if own != nil {
		if err := own.Flush(ctx); err != nil {
			return fmt.Errorf("publish the mark's own reads: %w", err)
		}
		reads = own.reads
	}
	n, ok, err := t.Xacts(ctx)
	if err != nil {
		return fmt.Errorf("read transaction counter: %w", err)
	}
	if ok {
		v[Xacts] = n - reads
	}
	return nil
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
)

// Rate is key's growth per second between two marks. It is nil where
// either mark lacks the key, where the end could not be read (the server
// was lost, or the run stopped first), where the transaction counter
// counts other workloads run beside this one, or where the counter was
// reset: PostgreSQL forgets its
// statistics when it recovers from a crash, so a counter kept per life of
// the server (perLife) gives no rate over a window in which it restarted,
// and pg_stat_reset() sends any such counter backwards. Table data
// survives both, so a count read from it is not perLife.
func Rate(start, end Mark, key string, perLife bool) (*float64, Gap) {
	switch {
	case end.Lost:
		return nil, Lost
	case start.Unread || end.Unread:
		return nil, Unread
	case key == Xacts && (start.Shared || end.Shared):
		return nil, Shared
	}
	a, okA := start.Values[key]
	b, okB := end.Values[key]
	seconds := end.At - start.At
	if !okA || !okB || seconds <= 0 {
		return nil, NoCounter
	}
	if b < a || perLife && start.Values[ServerStarted] != end.Values[ServerStarted] {
		return nil, Reset
	}
	n := float64(b-a) / seconds
	return &n, Counted
}

// Agreement says how far apart a rate's two sides are, or why there is
// only the client's; the figures themselves are in the metrics table.
func Agreement(name string, db *float64, gap Gap, client float64) string {
	switch {
	case gap == Lost:
		return name + ": client side only, over the seconds the server was up; the server was lost, so the database's counters could not be read at the window's end"
	case gap == Shared:
		return name + ": client side only; the database's transaction counter counts the workloads run beside this one (--with) too"
	case gap == Unread:
		return name + ": client side only; the database's counters were not read at the window's edges (the run's notes say why)"
	case gap == Reset:
		return name + ": client side only; the database's counter was reset during the window, by a server restart or a statistics reset, so it gives no rate"
	case db == nil:
		return name + ": client side only; the database keeps no counter for it"
	}
	diff := 0.0
	if *db != 0 {
		diff = (client - *db) / *db * 100
	}
	note := ""
	if math.Abs(diff) > Tolerance*100 {
		// The document's headline line says which side stands, and why.
		note = fmt.Sprintf(" (more than the %g%% within which they agree)", Tolerance*100)
	}
	return fmt.Sprintf("%s: the client's figure differs from the database's by %+.2f%%%s", name, diff, note)
}

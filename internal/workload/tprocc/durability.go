package tprocc

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/workload"
)

var (
	_ workload.AckLogger         = (*runner)(nil)
	_ workload.DurabilityAuditor = (*tprocc)(nil)
)

// The acknowledgement log is text, one New-Order a line, so that a person
// can grep it:
//
//	c W D O_ID C_ID OL_CNT I_ID   committed: the database acknowledged it
//	? W D O_ID                    in doubt: the commit was sent, never answered
//
// I_ID is the order's first line's item: after a failover to a replica
// that lacked an order, its id is handed out again, and the customer and
// line count alone would take one order in 33,000 for the lost one. A log
// of version 1 has no I_ID, and its orders are looked up without it. A
// procs-mode New-Order in doubt has O_ID 0: the routine that hands out the
// id never answered. About 20 bytes a New-Order.
const ackHeader = "# dbrig tproc-c acknowledgement log 2: c W D O_ID C_ID OL_CNT I_ID (committed), ? W D O_ID (in doubt; O_ID 0 when unknown)\n"

// ackFlushAt is how much of its log a virtual user keeps before writing
// it: a few thousand New-Orders, so that the log costs the run one write
// a few seconds, and no lock or system call per transaction.
const ackFlushAt = 32 << 10

// ackLog is the log every virtual user of a run writes its buffer to,
// whole lines at a time.
type ackLog struct {
	mu  sync.Mutex
	w   io.Writer
	err error
}

func (l *ackLog) write(b []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err == nil {
		_, l.err = l.w.Write(b)
	}
}

func (l *ackLog) flushed() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// LogAcks has the virtual users opened from now on log their New-Orders.
func (r *runner) LogAcks(w io.Writer) func() error {
	l := &ackLog{w: w}
	l.write([]byte(ackHeader))
	r.cfg.Acks = l
	return l.flushed
}

// acked logs the New-Order in hand as committed, with its id.
func (v *session) acked(oID int) {
	if v.cfg.Acks != nil {
		in := &v.no
		v.logAck(appendInts(append(v.acks, 'c'), in.w, in.d, oID, in.c, len(in.lines), in.lines[0].item))
	}
}

// inDoubt is err, of the New-Order in hand's commit, in doubt where it
// means the connection was lost (Committing), and then logged so: the
// commit may have happened. oID is 0 when unknown.
func (v *session) inDoubt(oID int, err error) error {
	err = v.Committing(err)
	if v.cfg.Acks != nil && errors.Is(err, driver.ErrInDoubt) {
		in := &v.no
		v.logAck(appendInts(append(v.acks, '?'), in.w, in.d, oID))
	}
	return err
}

func (v *session) logAck(b []byte) {
	v.acks = append(b, '\n')
	if len(v.acks) >= ackFlushAt {
		v.flushAcks()
	}
}

func (v *session) flushAcks() {
	if len(v.acks) > 0 {
		v.cfg.Acks.write(v.acks)
		v.acks = v.acks[:0]
	}
}

// Close writes what the session has left of the log, and closes its
// connection.
func (v *session) Close() error {
	v.flushAcks()
	return v.Conn.Close()
}

func appendInts(b []byte, ns ...int) []byte {
	for _, n := range ns {
		b = strconv.AppendInt(append(b, ' '), int64(n), 10)
	}
	return b
}

// ack is one acknowledged New-Order, as the log has it; item 0 where
// the log (version 1) does not name its first line's.
type ack struct{ o, c, lines, item int }

type district struct{ w, d int }

// readAcks reads a log: the acknowledged New-Orders by district, in the
// order they were logged, and how many were in doubt.
func readAcks(log io.Reader) (map[district][]ack, int64, error) {
	acks := map[district][]ack{}
	var doubt int64
	sc := bufio.NewScanner(log)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		want := []int{6, 7}
		if f[0] == "?" {
			want = []int{4}
		}
		nums := make([]int, len(f)-1)
		var err error
		for i := range nums {
			if nums[i], err = strconv.Atoi(f[i+1]); err != nil {
				break
			}
		}
		if err != nil || !slices.Contains(want, len(f)) || f[0] != "c" && f[0] != "?" {
			return nil, 0, fmt.Errorf("acknowledgement log, line %d: %q is not a New-Order (%s)", n, line, strings.TrimSpace(ackHeader[2:]))
		}
		if f[0] == "?" {
			doubt++
			continue
		}
		k := district{nums[0], nums[1]}
		a := ack{o: nums[2], c: nums[3], lines: nums[4]}
		if len(nums) > 5 {
			a.item = nums[5]
		}
		acks[k] = append(acks[k], a)
	}
	return acks, doubt, sc.Err()
}

// AuditDurability looks up every New-Order the log says was acknowledged:
// its order row, with the customer, line count and first item it was
// entered with, its order lines, and its new_order row or its delivery. An order whose id
// another order holds now was lost, and its id handed out again after the
// crash; so was one of two acknowledged under the same id.
func (w *tprocc) AuditDurability(ctx context.Context, t dbtarget.Target, log io.Reader) (workload.Durability, error) {
	var res workload.Durability
	acks, doubt, err := readAcks(log)
	if err != nil {
		return res, err
	}
	res.InDoubt = doubt
	q, err := sqlFor(t, "durability.sql")
	if err != nil {
		return res, err
	}
	b, err := workload.OpenBuilt(ctx, t, sqlFiles, readMeta)
	if err != nil {
		return res, err
	}
	defer b.Close()
	s := b.S
	keys := slices.SortedFunc(maps.Keys(acks), func(a, b district) int { return cmp.Or(cmp.Compare(a.w, b.w), cmp.Compare(a.d, b.d)) })
	for _, k := range keys {
		found, err := lookUp(ctx, s, q.Get("orders"), k, acks[k])
		if err != nil {
			return res, fmt.Errorf("look up the orders of warehouse %d, district %d: %w", k.w, k.d, err)
		}
		for _, a := range acks[k] {
			res.Acknowledged++
			f, ok := found[a.o]
			if ok && f.whole && !f.claimed && f.c == a.c && f.lines == a.lines && (a.item == 0 || f.item == a.item) {
				f.claimed = true
				found[a.o] = f
				continue
			}
			res.Missing++
			if len(res.MissingNames) < workload.MaxMissingNames {
				res.MissingNames = append(res.MissingNames, fmt.Sprintf("(w=%d, d=%d, o_id=%d)", k.w, k.d, a.o))
			}
		}
	}
	return res, nil
}

// order is an order as the database has it, and whether an acknowledged
// New-Order was found in it already.
type order struct {
	c, lines, item int
	whole, claimed bool
}

// lookUp reads the orders of one district over the ids acks span.
func lookUp(ctx context.Context, s dbtarget.Session, sql string, k district, acks []ack) (map[int]order, error) {
	lo, hi := acks[0].o, acks[0].o
	for _, a := range acks {
		lo, hi = min(lo, a.o), max(hi, a.o)
	}
	rows, err := s.Query(ctx, sql, k.w, k.d, lo, hi)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	found := map[int]order{}
	for rows.Next() {
		var id, whole int
		var item *int
		var o order
		if err := rows.Scan(&id, &o.c, &o.lines, &whole, &item); err != nil {
			return nil, err
		}
		if item != nil {
			o.item = *item
		}
		o.whole = whole == 1
		found[id] = o
	}
	return found, rows.Err()
}

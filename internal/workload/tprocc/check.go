package tprocc

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/workload"
)

// condition is one of the consistency conditions of clause 3.3.2. Its
// query (block cond<N> of check.sql) counts the rows or groups of one
// warehouse that break it.
type condition struct {
	n    int
	text string
}

var conditions = []condition{
	{1, "W_YTD = sum(D_YTD)"},
	{2, "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)"},
	{3, "max(NO_O_ID) - min(NO_O_ID) + 1 = count(new_order)"},
	{4, "sum(O_OL_CNT) = count(order_line)"},
	{5, "O_CARRIER_ID is null iff a new_order row exists"},
	{6, "O_OL_CNT = count(order_line) per order"},
	{7, "OL_DELIVERY_D is null iff O_CARRIER_ID is null"},
	{8, "W_YTD = sum(H_AMOUNT)"},
	{9, "D_YTD = sum(H_AMOUNT)"},
	{10, "C_BALANCE = sum(delivered OL_AMOUNT) - sum(H_AMOUNT)"},
	{11, "count(orders) - count(new_order) = 2100"},
	{12, "C_BALANCE + C_YTD_PAYMENT = sum(delivered OL_AMOUNT)"},
}

// freshOnly is the condition that holds only until the first Delivery:
// Delivery removes new_order rows, and nothing adds orders to make up.
const freshOnly = 11

// deliveredJob marks the job that asks whether Delivery has run.
const deliveredJob = 0

func (c condition) id() string { return "3.3.2." + strconv.Itoa(c.n) }

// check runs every condition against every warehouse, in parallel, and
// writes one line per condition. ok is false if any condition failed.
func check(ctx context.Context, t dbtarget.Target, warehouses int, out io.Writer) (bool, error) {
	q, err := sqlFor(t, "check.sql")
	if err != nil {
		return false, err
	}

	type job struct{ cond, w int } // cond is deliveredJob or a condition's number
	var jobs []job
	for w := 1; w <= warehouses; w++ {
		jobs = append(jobs, job{deliveredJob, w})
		for _, c := range conditions {
			jobs = append(jobs, job{c.n, w})
		}
	}
	// Looking the blocks up before any task starts keeps a missing block a
	// panic in the caller, where tests see it.
	sqls := map[int]string{deliveredJob: q.Get("delivered")}
	for _, c := range conditions {
		sqls[c.n] = q.Get("cond" + strconv.Itoa(c.n))
	}

	// found[cond][w-1] is the number of violations. Each job writes its own
	// slot, so the jobs need no lock.
	found := map[int][]int64{}
	for n := range sqls {
		found[n] = make([]int64, warehouses)
	}
	tasks := make([]workload.Task, len(jobs))
	for i, j := range jobs {
		tasks[i] = func(ctx context.Context, s dbtarget.Session) error {
			if err := s.QueryRow(ctx, sqls[j.cond], j.w).Scan(&found[j.cond][j.w-1]); err != nil {
				name := "delivered"
				if j.cond != deliveredJob {
					name = "condition 3.3.2." + strconv.Itoa(j.cond)
				}
				return fmt.Errorf("consistency %s, warehouse %d: %w", name, j.w, err)
			}
			return nil
		}
	}
	// Reads only, so even SQLite (WAL) runs them side by side.
	if err := workload.Parallel(ctx, t, min(runtime.NumCPU(), len(jobs)), tasks); err != nil {
		return false, err
	}

	if err := printNote(ctx, t, q, out); err != nil {
		return false, err
	}
	ok := true
	for _, c := range conditions {
		total, where := tally(found[c.n])
		switch {
		case c.n == freshOnly && delivered(found[deliveredJob]):
			fmt.Fprintf(out, "SKIP  %-8s  %s  (Delivery has run since the build; the condition holds only on a freshly built database)\n", c.id(), c.text)
		case total == 0:
			fmt.Fprintf(out, "PASS  %-8s  %s\n", c.id(), c.text)
		default:
			ok = false
			fmt.Fprintf(out, "FAIL  %-8s  %s  (%s in %s)\n", c.id(), c.text, plural(total, "violation"), warehouseList(where))
		}
	}
	return ok, nil
}

// printNote prints the dialect's note (block "note" of check.sql, where
// it has one) when the note says something.
func printNote(ctx context.Context, t dbtarget.Target, q workload.SQLFile, out io.Writer) error {
	sql, ok := q["note"]
	if !ok {
		return nil
	}
	s, err := t.Session(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	var note *string
	if err := s.QueryRow(ctx, sql).Scan(&note); err != nil {
		// A database built before the note's routine: say so, and check on.
		fmt.Fprintf(out, "NOTE  could not tell whether intended rollbacks are logged: %v\n", err)
		return nil
	}
	if note != nil {
		fmt.Fprintf(out, "NOTE  %s\n", *note)
	}
	return nil
}

// tally sums the violations and lists the warehouses that have any.
func tally(perWarehouse []int64) (total int64, where []int) {
	for i, n := range perWarehouse {
		if n != 0 {
			total += n
			where = append(where, i+1)
		}
	}
	return total, where
}

func delivered(perWarehouse []int64) bool {
	total, _ := tally(perWarehouse)
	return total > 0
}

func plural(n int64, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.FormatInt(n, 10) + " " + word + "s"
}

// maxListed caps the warehouse list, which at a thousand warehouses
// would otherwise drown the line.
const maxListed = 10

func warehouseList(ws []int) string {
	head := "warehouse "
	if len(ws) > 1 {
		head = "warehouses "
	}
	var b strings.Builder
	b.WriteString(head)
	for i, w := range ws {
		if i == maxListed {
			fmt.Fprintf(&b, ", ... (%d in all)", len(ws))
			break
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(w))
	}
	return b.String()
}

package tprocc

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/driver"
)

func TestDurabilityAuditSQLite(t *testing.T) {
	testDurabilityAudit(t, onSQLite)
}

func TestDurabilityAuditPostgres(t *testing.T) {
	testDurabilityAudit(t, onPostgres)
}

// testDurabilityAudit logs a short run's New-Orders and finds every one of
// them, then audits a log written by hand against the orders the build
// loaded: whole ones are found, and each way of being lost is named.
func testDurabilityAudit(t *testing.T, src source) {
	ctx := context.Background()
	w, tg := buildOn(t, src, 1)
	r, err := w.Open(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var log bytes.Buffer
	flushed := r.(*runner).LogAcks(&log)
	res, err := driver.Run(ctx, r, driver.Config{VUs: 2, Duration: time.Second, Classify: tg.Classify})
	if err != nil {
		t.Fatal(err)
	}
	if err := flushed(); err != nil {
		t.Fatal(err)
	}
	logged := int64(strings.Count(log.String(), "\nc "))
	d, err := w.AuditDurability(ctx, tg, bytes.NewReader(log.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	// Every New-Order the window counted was acknowledged; a few more may
	// have committed after it closed.
	if window := res.Tally[tNewOrders] - res.Tally[tRollbacks]; d.Acknowledged != logged || logged < window || window == 0 {
		t.Errorf("audit looked up %d, the log holds %d, the window counted %d New-Orders", d.Acknowledged, logged, window)
	}
	if d.Missing != 0 || d.InDoubt != 0 {
		t.Errorf("after a quiet run: %+v, want nothing missing or in doubt", d)
	}

	// Orders 1-2100 of each district were loaded delivered, 2101-3000 not.
	s, err := tg.Session(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c5, n5 := orderOf(t, s, 3, 5)
	c2500, n2500 := orderOf(t, s, 3, 2500)
	c9, n9 := orderOf(t, s, 3, 9)
	hand := strings.Join([]string{
		"# written by the test",
		fmt.Sprintf("c 1 3 5 %d %d", c5, n5),
		fmt.Sprintf("c 1 3 2500 %d %d", c2500, n2500),
		// Acknowledged twice under one id: one of them was lost.
		fmt.Sprintf("c 1 3 2500 %d %d", c2500, n2500),
		// Another customer's order holds the id now.
		fmt.Sprintf("c 1 3 6 %d %d", c5, n5),
		"c 1 4 99999 1 5",
		// Its line moved away below.
		fmt.Sprintf("c 1 3 9 %d %d", c9, n9),
		"? 1 4 0",
		"? 1 3 2501",
		"",
	}, "\n")
	if _, err := s.Exec(ctx, "UPDATE order_line SET ol_w_id = 99 WHERE ol_w_id = 1 AND ol_d_id = 3 AND ol_o_id = 9 AND ol_number = 1"); err != nil {
		t.Fatal(err)
	}
	d, err = w.AuditDurability(ctx, tg, strings.NewReader(hand))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"(w=1, d=3, o_id=2500)", "(w=1, d=3, o_id=6)", "(w=1, d=3, o_id=9)", "(w=1, d=4, o_id=99999)"}
	if d.Acknowledged != 6 || d.Missing != 4 || d.InDoubt != 2 || !slices.Equal(d.MissingNames, want) {
		t.Errorf("audit of the hand-written log: %+v; want 6 acknowledged, 2 in doubt, missing %q", d, want)
	}
}

// orderOf reads an order's customer and line count in warehouse 1.
func orderOf(t *testing.T, s dbtarget.Session, d, o int) (c, lines int) {
	t.Helper()
	err := s.QueryRow(context.Background(), "SELECT o_c_id, o_ol_cnt FROM orders WHERE o_w_id = 1 AND o_d_id = $1 AND o_id = $2", d, o).Scan(&c, &lines)
	if err != nil {
		t.Fatal(err)
	}
	return c, lines
}

// TestReadAcksRefusesGarbage: a line that is not a New-Order stops the
// audit with its line number, rather than being skipped as if it were
// not there.
func TestReadAcksRefusesGarbage(t *testing.T) {
	for _, line := range []string{"x 1 2 3", "c 1 2 3", "c 1 2 3 4 five", "? 1 2", "c 1 2 3 4 5 6 7"} {
		_, _, err := readAcks(strings.NewReader("c 1 2 3 4 5\n" + line + "\n"))
		if err == nil || !strings.Contains(err.Error(), "line 2") {
			t.Errorf("%q: %v, want an error at line 2", line, err)
		}
	}
	acks, doubt, err := readAcks(strings.NewReader(ackHeader + "\n  \nc 1 2 3 4 5\n? 1 2 0\n"))
	if err != nil || doubt != 1 || len(acks[district{1, 2}]) != 1 {
		t.Errorf("readAcks = %v, %d, %v; want one acknowledged, one in doubt", acks, doubt, err)
	}
}

// BenchmarkAckLog is what logging one acknowledged New-Order costs a
// session, its share of the buffer's writes included.
func BenchmarkAckLog(b *testing.B) {
	v := &session{cfg: &runConfig{Acks: &ackLog{w: io.Discard}}}
	v.no = newOrderInput{w: 12, d: 7, c: 2345, lines: make([]orderLineInput, 10)}
	b.ReportAllocs()
	for i := range b.N {
		v.acked(3001 + i%100000)
	}
}

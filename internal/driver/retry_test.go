package driver

import (
	"context"
	"testing"
	"time"
)

// conflicted is a workload whose one transaction type loses its first
// `fails` attempts to a conflict (errBusy), then commits.
type conflicted struct{ fails int }

func (c *conflicted) TxNames() []string    { return []string{"t"} }
func (c *conflicted) TallyNames() []string { return []string{"attempts"} }
func (c *conflicted) NewVU(context.Context, int) (VU, error) {
	return &conflictedVU{fails: c.fails}, nil
}

type conflictedVU struct{ fails, tries int }

func (v *conflictedVU) Next() int { v.tries = 0; return 0 }
func (v *conflictedVU) Run(_ context.Context, _ int, t Tally) error {
	v.tries++
	t[0]++
	time.Sleep(time.Millisecond)
	if v.tries <= v.fails {
		return errBusy
	}
	return nil
}
func (v *conflictedVU) Reconnect(context.Context) error { return nil }
func (v *conflictedVU) Close() error                    { return nil }

func TestRetriesBackOffAndAbort(t *testing.T) {
	for _, c := range []struct {
		name       string
		fails, max int
		backoff    Backoff
	}{
		{"backoff", 3, 5, Backoff{Base: 4 * time.Millisecond, Max: 10 * time.Millisecond}},
		{"at once", 3, 5, Backoff{}},
		{"out of retries", 3, 2, Backoff{Base: time.Millisecond, Max: time.Millisecond}},
		{"none", 1, NoRetries, DefaultBackoff},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := Run(context.Background(), &conflicted{fails: c.fails}, Config{
				VUs: 2, Duration: 600 * time.Millisecond, Classify: classify, MaxRetries: c.max, Backoff: c.backoff,
			})
			if err != nil {
				t.Fatal(err)
			}
			tx := res.Tx[0]
			ended := tx.Count + tx.Errors
			if ended == 0 {
				t.Fatal("no transaction ended")
			}
			retries := int64(min(c.fails, max(c.max, 0)))
			// A transaction begun before the window opened counts its
			// retries of the window but not its end: a VU's one at most.
			if tx.Retries < retries*ended || tx.Retries > retries*(ended+2) {
				t.Errorf("%d retries over %d transactions, want %d each", tx.Retries, ended, retries)
			}
			if c.max < c.fails {
				// Every transaction ran out of retries: each is an error, and an abort.
				if tx.Count != 0 || tx.Errors != ended || tx.Aborts != tx.Errors || res.ErrorClasses["retry"] != tx.Errors {
					t.Errorf("count %d, errors %d, aborts %d, classes %v; want every one aborted", tx.Count, tx.Errors, tx.Aborts, res.ErrorClasses)
				}
			} else if tx.Errors != 0 || tx.Aborts != 0 {
				t.Errorf("errors %d, aborts %d; want none, every conflict retried", tx.Errors, tx.Aborts)
			}
			// Each attempt takes 1 ms or more, and each backoff at least 1 ns
			// and below its ceiling.
			lo := time.Duration(tx.Retries) * time.Millisecond
			if tx.Retries > 0 && tx.Retrying < lo+tx.Backoff {
				t.Errorf("retrying took %s over %d retries with %s of backoff; want at least %s", tx.Retrying, tx.Retries, tx.Backoff, lo+tx.Backoff)
			}
			ceiling := time.Duration(0)
			for n := range retries {
				ceiling += min(c.backoff.Base<<n, c.backoff.Max)
			}
			switch {
			case c.backoff.Base == 0 && tx.Backoff != 0:
				t.Errorf("backoff %s without one", tx.Backoff)
			case c.backoff.Base > 0 && tx.Retries > 0 && (tx.Backoff < time.Duration(tx.Retries) || tx.Backoff > ceiling*time.Duration(ended+2)):
				t.Errorf("backoff %s over %d retries; want between 1 ns a retry and %s a transaction", tx.Backoff, tx.Retries, ceiling)
			}
		})
	}
}

func TestBackoffWait(t *testing.T) {
	b := Backoff{Base: 2 * time.Millisecond, Max: 50 * time.Millisecond}
	for n := int64(0); n < 70; n++ {
		ceiling := min(b.Base<<min(n, 40), b.Max)
		var most time.Duration
		for range 200 {
			w := b.wait(n)
			if w < 1 || w > ceiling {
				t.Fatalf("wait after %d retries %s, want in (0, %s]", n, w, ceiling)
			}
			most = max(most, w)
		}
		// Full jitter: 200 draws reach the top half of the ceiling.
		if most < ceiling/2 {
			t.Errorf("after %d retries the longest of 200 waits was %s, ceiling %s", n, most, ceiling)
		}
	}
	if w := (Backoff{}).wait(3); w != 0 {
		t.Errorf("zero Backoff waits %s", w)
	}
}

package cli_test

import (
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// TestSerializablePostgres: TPROC-C's eight VUs on one warehouse under
// serializable isolation conflict all the time; the database aborts what
// would break the serial order (SQLSTATE 40001) and the driver retries
// it, with a backoff. Retries are counted per type, every error is an
// abort that ran out of retries (none escapes below --max-retries), the
// database's TPM (less the retried attempts it ran) agrees with the
// client's, and the database stays consistent, in both modes.
func TestSerializablePostgres(t *testing.T) {
	t.Parallel()
	u := pgTPROCC(t)
	dir := t.TempDir()
	for _, mode := range []string{"procs", "sql"} {
		path := filepath.Join(dir, mode+".json")
		// Each abort is a failed transaction: a few in a thousand here.
		o := mustRun(t, "run", "tproc-c", "--target", u, "--vus", "8", "--rampup", "1s", "--duration", "8s", "--mode", mode,
			"--isolation", "serializable", "--max-error-rate", "5", "--json", path)
		wantIn(t, "the summary", o.stdout, "TPM: the database's transaction counter is taken less the")
		doc := readDoc(t, path, "postgres", mode)
		if doc.Config["isolation"] != "serializable" {
			t.Errorf("%s: config isolation %v", mode, doc.Config["isolation"])
		}
		var retries int64
		for _, tx := range doc.Transactions {
			retries += tx.Retries
			if tx.Errors != tx.Aborts {
				t.Errorf("%s %s: %d errors, %d of them aborts after the last retry: an error escaped below --max-retries (%s)", mode, tx.Name, tx.Errors, tx.Aborts, tx.ErrorSample)
			}
			if tx.Retries > 0 && (tx.RetryingMS <= 0 || tx.BackoffMS <= 0 || tx.RetryingMS < tx.BackoffMS || tx.RetryingMS > tx.BusyMS) {
				t.Errorf("%s %s: retrying %.1f ms, backoff %.1f ms, busy %.1f ms; want 0 < backoff <= retrying <= busy", mode, tx.Name, tx.RetryingMS, tx.BackoffMS, tx.BusyMS)
			}
		}
		if retries == 0 {
			t.Errorf("%s: no retry under serializable with 8 VUs on 1 warehouse", mode)
		}
		// Within 2%, or two dozen transactions over the window where that
		// is more: autovacuum's and analyze's count in the database's too,
		// and a window under load holds a few hundred. Under CI's load the
		// database counted up to 19 more than the client over 8 s in procs
		// mode (1.4%) with one abort, which is not yet explained (issue
		// 37's note); alone it reads 0.1-0.3% apart.
		tpm, _ := doc.Metric("tpm")
		if tpm.DB == nil {
			t.Fatalf("%s: no database-side TPM", mode)
		}
		apart := (*tpm.DB - *tpm.Client) * doc.WindowSeconds / 60
		if bound := max(24, *tpm.Client*doc.WindowSeconds/60/50); math.Abs(apart) > bound {
			t.Errorf("%s: TPM %.0f by the database and %.0f by the client: %.0f transactions apart over the window, more than %.0f", mode, *tpm.DB, *tpm.Client, apart, bound)
		}
		if !strings.Contains(o.stdout, "aborts") || !strings.Contains(o.stdout, "retrying %") {
			t.Errorf("%s: the summary's table lacks the aborts and the retrying share", mode)
		}
		checkPasses(t, u)
	}
}

// TestRetryRefusals: a bound that cannot be gets one line and exit 2, and
// SQLite, whose transactions are always serializable, takes no weaker
// level; a node affinity wants a target of several nodes. No result is
// written.
func TestRetryRefusals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	u := "sqlite:" + filepath.Join(dir, "x.db")
	path := filepath.Join(dir, "r.json")
	wantIn(t, "--max-retries -1", usageError(t, dbrig(t, "run", "tproc-c", "--target", u, "--max-retries", "-1", "--json", path)), "--max-retries must be 0 or more")
	wantIn(t, "--isolation bogus", usageError(t, dbrig(t, "run", "tproc-c", "--target", u, "--isolation", "snapshot", "--json", path)), "want read-committed, repeatable-read or serializable")
	u = sqliteTPROCC(t)
	for _, args := range [][]string{
		{"--isolation", "read-committed"}, {"--isolation", "repeatable-read"},
	} {
		wantIn(t, strings.Join(args, " ")+" on SQLite", usageError(t, dbrig(t, append([]string{"run", "tproc-c", "--target", u, "--json", path}, args...)...)),
			"SQLite's transactions are always serializable")
	}
	wantIn(t, "--node-affinity on one server", usageError(t, dbrig(t, "run", "tproc-c", "--target", u, "--node-affinity", "warehouse", "--rampup", "0s", "--duration", "1s", "--json", path)), "the target is one server")
	noFile(t, path)
}

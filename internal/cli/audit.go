package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/report"
	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/workload"
	"github.com/spf13/cobra"
)

func newAudit() *cobra.Command {
	c := &cobra.Command{
		Use:   "audit",
		Short: "Audit what a run left in the database",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return exitcode.Userf("name what to audit: dbrig audit durability RESULT")
		},
	}
	c.AddCommand(newAuditDurability())
	return c
}

func newAuditDurability() *cobra.Command {
	var url string
	c := &cobra.Command{
		Use:   "durability RESULT",
		Short: "Look up again every change a run's database acknowledged; exit 1 if any is missing",
		Long: `A run with --audit-durability logs every change the database acknowledged
as committed (tproc-c: every New-Order, as w, d, o_id) in a file beside its
result, RESULT with .acks for .json. This looks each of them up again on the
target, then runs the workload's consistency check, and prints what it found:
how many were acknowledged, how many are missing (named), and how many were
in doubt (the commit was sent, the answer never came), which are not counted
as lost. The exit code is 1 when any is missing or the check fails.

The target is the one the result names, unless --target gives another: a
result never holds a password, so a URL that needs one must be given again.` + targetLong,
		Example: `  dbrig audit durability dbrig-results/tproc-c-20261122T120000Z.json
  dbrig audit durability r.json --target postgres://bench@localhost/bench`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			doc, err := result.Read(args[0])
			if errors.Is(err, fs.ErrNotExist) {
				return exitcode.Userf("no result document %s", args[0])
			}
			if err != nil {
				return exitcode.Userf("%v", err)
			}
			// A run whose own audit failed has its log but no finding.
			log := ackLogPath(args[0])
			if doc.Durability != nil {
				log = filepath.Join(filepath.Dir(args[0]), doc.Durability.Log)
			}
			if _, err := os.Stat(log); err != nil {
				return exitcode.Userf("%s has no acknowledgement log %s: run the workload with --audit-durability", args[0], log)
			}
			w, ok := workload.New(doc.Workload)
			if !ok {
				return exitcode.Userf("%s is a run of %q, which this dbrig does not know", args[0], doc.Workload)
			}
			if url == "" {
				url = doc.Target.URL
			}
			ctx, stop := signalContext(c.ErrOrStderr())
			defer stop()
			t, err := dbtarget.OpenExisting(ctx, url)
			if err != nil {
				return err
			}
			defer t.Close()
			d, err := auditDurability(ctx, w, t, log, c.ErrOrStderr())
			if err != nil {
				return err
			}
			report.Durability(c.OutOrStdout(), d)
			return durabilityVerdict(d)
		},
	}
	c.Flags().StringVar(&url, "target", "", "the target to look on (default: the one the result names)")
	return c
}

// ackLogPath is where the acknowledgement log of the result at path goes.
func ackLogPath(path string) string { return strings.TrimSuffix(path, ".json") + ".acks" }

// auditDurability looks up on t every change the log at path names, then
// runs w's consistency check, whose lines go to progress.
func auditDurability(ctx context.Context, w workload.Workload, t dbtarget.Target, path string, progress io.Writer) (*result.Durability, error) {
	a, ok := w.(workload.DurabilityAuditor)
	if !ok {
		return nil, exitcode.Userf("%s has no durability audit", w.Name())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, exitcode.Userf("the acknowledgement log: %v", err)
	}
	defer f.Close()
	fmt.Fprintf(progress, "Looking up every change the database acknowledged, from %s\n", path)
	d, err := a.AuditDurability(ctx, t, f)
	if errors.Is(err, workload.ErrNoSchema) {
		return nil, noSchema(w, t)
	}
	if err != nil {
		return nil, fmt.Errorf("durability audit: %w", err)
	}
	var consistent *bool
	if ch, ok := w.(workload.Checker); ok {
		fmt.Fprintln(progress, "Consistency check after the run:")
		pass, err := ch.Check(ctx, t, progress)
		if err != nil {
			return nil, fmt.Errorf("consistency check: %w", err)
		}
		consistent = &pass
	}
	return result.NewDurability(filepath.Base(path), d, consistent), nil
}

// durabilityVerdict fails a command whose audit found a change missing or
// the data inconsistent; the report has said so.
func durabilityVerdict(d *result.Durability) error {
	if d.Missing > 0 || d.Consistent != nil && !*d.Consistent {
		return &failure{}
	}
	return nil
}

// ackRecording is a run's acknowledgement log while the run goes: a
// temporary file in the results' directory until the result is named.
type ackRecording struct {
	f       *os.File
	flushed func() error
	// kept: keep has the log, which nothing may delete from then on.
	kept bool
}

// recordAcks has r log what the database acknowledges into a file in dir.
func recordAcks(w workload.Workload, r workload.Run, dir string) (*ackRecording, error) {
	l, ok := r.(workload.AckLogger)
	if _, audits := w.(workload.DurabilityAuditor); !ok || !audits {
		return nil, exitcode.Userf("%s has no durability audit", w.Name())
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(dir, ".dbrig-acks-*")
	if err != nil {
		return nil, err
	}
	return &ackRecording{f: f, flushed: l.LogAcks(f)}, nil
}

// keep closes the log, once the run's virtual users are done with it,
// and names it after the result at path. It returns where the log is,
// also with an error, when the log could not be written whole or named:
// what it holds is kept all the same.
func (a *ackRecording) keep(path string) (string, error) {
	a.kept = true
	err := errors.Join(a.flushed(), a.f.Chmod(0o644), a.f.Close())
	log := ackLogPath(path)
	if rerr := os.Rename(a.f.Name(), log); rerr != nil {
		log, err = a.f.Name(), errors.Join(err, rerr)
	}
	if err != nil {
		return log, fmt.Errorf("the acknowledgement log: %w", err)
	}
	return log, nil
}

// discard removes the log of a run that left no result; once keep has
// it, it is the result's.
func (a *ackRecording) discard() {
	if a.kept {
		return
	}
	a.f.Close()
	os.Remove(a.f.Name())
}

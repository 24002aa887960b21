package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/workload"
)

// AuditDurability looks up on t every change the log at path names, then
// runs w's consistency check, whose lines go to progress.
func AuditDurability(ctx context.Context, w workload.Workload, t dbtarget.Target, path string, progress io.Writer) (*result.Durability, error) {
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
		return nil, workload.NoSchema(w, t)
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
	return result.NewDurability(path, d, consistent), nil
}

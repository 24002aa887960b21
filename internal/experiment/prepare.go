package experiment

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/server"
	"github.com/dbrig/dbrig/internal/workload"
)

// noteMemory records how the database compares with the host's memory. A
// managed server's database that fits the OS page cache is read from
// memory even with a small buffer cache, which is the usual reason a
// buffer-cache sweep shows less than the classic studies did.
func (r *run) noteMemory(ctx context.Context) {
	size, err := r.t.Size(ctx)
	host := result.ReadHost()
	if err != nil || r.srv == nil || host.MemoryBytes == 0 {
		return
	}
	for _, n := range r.Doc.Notes {
		if strings.HasPrefix(n, "The database is ") {
			return // a resumed sweep noted it already
		}
	}
	gib := func(b int64) string { return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30)) }
	var below []string
	for _, p := range r.Points {
		if m := r.Spec.Confinement(p).Memory; m > 0 && m < size {
			below = append(below, r.Spec.Label(p))
		}
	}
	if len(below) > 0 {
		r.addNote(fmt.Sprintf("The database is %s, more than the server's memory limit (page cache included) at %s: there the OS page cache cannot hold it, so what the buffer cache misses is read from the device.",
			gib(size), strings.Join(below, "; ")))
		return
	}
	if r.readsDirect(ctx) {
		r.addNote(fmt.Sprintf("The database is %s, and at every point the server reads its data files past the OS page cache (direct I/O): what the buffer cache misses is read from the device.",
			gib(size)))
		return
	}
	if size < host.MemoryBytes/2 {
		r.addNote(fmt.Sprintf("The database is %s and this host has %s of memory: it fits the OS page cache, so a buffer cache smaller than the database costs copies from the OS cache (re-read after each drop), not steady disk reads.",
			gib(size), gib(host.MemoryBytes)))
		return
	}
	r.addNote(fmt.Sprintf("The database is %s and this host has %s of memory.", gib(size), gib(host.MemoryBytes)))
}

// readsDirect reports whether every point's server reads its data files
// past the OS page cache.
func (r *run) readsDirect(ctx context.Context) bool {
	for _, p := range r.Points {
		d, ok := r.build(p).Server.(server.DirectReader)
		if !ok || !d.ReadsDirect(ctx, r.Spec.ServerSettings(p)) {
			return false
		}
	}
	return true
}

// ensureSchema builds the workload's schema unless it is there already,
// as after a resume or on an external target built beforehand. A workload
// with no build needs nothing.
func (r *run) ensureSchema(ctx context.Context) error {
	w, b, err := r.Spec.builder()
	if b == nil || err != nil {
		return err
	}
	opened, err := w.Open(ctx, r.t)
	if err == nil {
		opened.Close()
		return nil
	}
	if !errors.Is(err, workload.ErrNoSchema) {
		return err
	}
	var params []string
	for _, p := range r.Spec.Build {
		params = append(params, p.Name+"="+p.Value)
	}
	fmt.Fprintf(r.o.Log, "Building %s on %s (%s)\n", r.Spec.Workload, r.t.URL(), strings.Join(params, " "))
	bctx, cancel := r.stoppable(ctx)
	defer cancel()
	sum, err := b.Build(bctx, r.t, workload.BuildOptions{Progress: func(done, total int64, what string) {
		pct := 0.0
		if total > 0 {
			pct = float64(done) / float64(total) * 100
		}
		r.o.Progress(fmt.Sprintf("build %-8s %5.1f%%  %d of %d rows", what, pct, done, total))
	}})
	r.o.ProgressDone()
	if err != nil {
		if bctx.Err() != nil {
			return fmt.Errorf("build interrupted: %w", bctx.Err())
		}
		return err
	}
	fmt.Fprintf(r.o.Log, "Built %s: %d rows in %.1f s\n", r.Spec.Workload, sum.Rows, sum.Seconds)
	return nil
}

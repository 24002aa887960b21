package experiment

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/human"
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
	shown := func(b int64) string { return human.Bytes(float64(b)) }
	var below []string
	for _, p := range r.Points {
		if m := r.Spec.Confinement(p).Memory; m > 0 && m < size {
			below = append(below, r.Spec.Label(p))
		}
	}
	if len(below) > 0 {
		r.addNote(fmt.Sprintf("The database is %s, more than the server's memory limit (page cache included) at %s: there the OS page cache cannot hold it, so what the buffer cache misses is read from the device.",
			shown(size), strings.Join(below, "; ")))
		return
	}
	if r.readsDirect(ctx) {
		r.addNote(fmt.Sprintf("The database is %s, and at every point the server reads its data files past the OS page cache (direct I/O): what the buffer cache misses is read from the device.",
			shown(size)))
		return
	}
	if size < host.MemoryBytes/2 {
		r.addNote(fmt.Sprintf("The database is %s and this host has %s of memory: it fits the OS page cache, so a buffer cache smaller than the database costs copies from the OS cache (re-read after each drop), not steady disk reads.",
			shown(size), shown(host.MemoryBytes)))
		return
	}
	r.addNote(fmt.Sprintf("The database is %s and this host has %s of memory.", shown(size), shown(host.MemoryBytes)))
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

// ensureBuilt builds the schema on the point's cluster, or the external
// target, the first time a run there needs it. stop reports that the
// sweep was stopped meanwhile.
func (r *run) ensureBuilt(ctx context.Context, pt Point) (stop bool, err error) {
	cluster := ""
	if r.srv != nil {
		cluster = r.build(pt).Dir
	}
	if r.built[cluster] {
		return false, nil
	}
	if err := r.ensureSchema(ctx); err != nil {
		return false, err
	}
	r.built[cluster] = true
	if r.Spec.Builds() {
		r.noteMemory(ctx)
	}
	return r.stopping(ctx), nil
}

// settle has the server do what the last run left it to do (old row
// versions to purge, dirty pages to write) now, not on this run's time.
// It reports true when the sweep was stopped meanwhile.
func (r *run) settle(ctx context.Context) (stop bool) {
	st, ok := r.t.(dbtarget.Settler)
	if !ok {
		return false
	}
	sctx, cancel := r.stoppable(ctx)
	line, err := st.Settle(sctx)
	cancel()
	switch {
	case err != nil && sctx.Err() != nil:
		return true
	case err != nil:
		r.warnOnce(&r.settleNote, "the server was not settled between runs", err)
	default:
		fmt.Fprintf(r.o.Log, "settled: %s\n", line)
	}
	return false
}

// dropCaches empties the OS page cache before a run. Only a managed
// server is known to share this host's page cache; an external target's
// host is out of reach, and dropping ours would only slow everything
// else down.
func (r *run) dropCaches() {
	err := errors.New("the target is external, and its host's cache is out of dbrig's reach")
	if r.srv != nil {
		err = r.o.DropCaches()
	}
	if err != nil {
		r.warnOnce(&r.dropNote, "OS page cache not dropped between runs", err)
	}
}

// warnOnce tells, in the sweep's notes and its log, what could not be
// done between runs; done keeps it to once a sweep.
func (r *run) warnOnce(done *bool, what string, err error) {
	if *done {
		return
	}
	*done = true
	r.addNote(what + ": " + err.Error())
	fmt.Fprintf(r.o.Log, "dbrig: %s: %v\n", what, err)
}

// prewarm reads the whole database into the server's cache before the
// point's run, and records how much of it stayed resident. stop reports
// that the sweep was stopped meanwhile.
func (r *run) prewarm(ctx context.Context, pi int) (stop bool, err error) {
	// The spec was refused unless the target's kind can prewarm.
	pw, ok := r.t.(dbtarget.Prewarmer)
	if !ok {
		return false, r.pointError(pi, fmt.Errorf("prewarm: a %s target cannot warm its cache", r.t.Kind()))
	}
	pctx, cancel := r.stoppable(ctx)
	res, err := pw.Prewarm(pctx)
	cancel()
	if err != nil {
		if pctx.Err() != nil {
			return true, nil
		}
		return false, r.pointError(pi, fmt.Errorf("prewarm: %w", err))
	}
	r.Doc.Points[pi].Resident = append(r.Doc.Points[pi].Resident, res.Fraction)
	fmt.Fprintf(r.o.Log, "prewarm: %.1f%% of %s pages resident\n", res.Fraction*100, human.Thousands(float64(res.Blocks)))
	return false, nil
}

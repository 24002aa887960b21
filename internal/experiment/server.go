package experiment

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/server"
	"github.com/dbrig/dbrig/internal/telemetry"
)

// DatabaseName is the database a managed sweep creates and runs in.
const DatabaseName = "dbrig"

// initServer checks every build and creates their clusters, all before
// anything is built or run.
func (r *run) initServer(ctx context.Context) error {
	builds, err := r.UsableServerBuilds(ctx)
	if err != nil {
		return err
	}
	r.builds, r.srv = builds, builds[0].Server
	var versions []string
	for _, b := range builds {
		if !slices.Contains(versions, b.Version) {
			versions = append(versions, b.Version)
		}
	}
	r.Doc.Target.Version = strings.Join(versions, ", ")
	for _, b := range builds {
		if err := r.initBuild(ctx, b); err != nil {
			return err
		}
	}
	return nil
}

// initBuild checks that build b can take its points' settings and
// confinements, and creates its cluster unless it exists.
func (r *run) initBuild(ctx context.Context, b ServerBuild) error {
	var points []map[string]string
	// Confine checks that this host can confine the server so, which it
	// must before anything is built; each start sets it again.
	checked := map[server.Confinement]bool{}
	for _, p := range r.Points {
		if r.Spec.BuildOf(p) != b.Name {
			continue
		}
		points = append(points, r.Spec.ServerSettings(p))
		if c := r.Spec.Confinement(p); !checked[c] {
			checked[c] = true
			if err := b.Server.Confine(c); err != nil {
				return err
			}
		}
	}
	if err := b.Server.Preflight(ctx, points); err != nil {
		return err
	}
	if !b.Server.Exists() {
		fmt.Fprintf(r.o.Log, "Creating a %s cluster in %s (%s)\n", r.Spec.KindOf(b.Name), b.Dir, b.Version)
	}
	if err := b.Server.Init(ctx); err != nil {
		return err
	}
	// A sweep killed outright leaves its server behind; the sweep cannot
	// know what state it is in, so the user stops it.
	if st, err := b.Server.Status(ctx); err == nil && st.State == server.Running {
		return exitcode.Userf("a server from an earlier run of this sweep is still running in %s: stop it with `dbrig server stop --dir %s`, then resume",
			b.Dir, b.Dir)
	}
	return nil
}

// stopServer stops a managed server and keeps each cluster's log beside
// the results (server.log, or server-NAME.log for several).
func (r *run) stopServer() error {
	if r.srv == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	err := errors.Join(r.srv.Stop(ctx), r.unpin())
	for _, b := range r.builds {
		copyFile(b.Server.LogPath(), filepath.Join(r.Dir, filepath.Base(b.Dir)+".log"))
	}
	return err
}

// unpin gives the client back every CPU, as before the server's start.
func (r *run) unpin() error {
	if r.pin == nil {
		return nil
	}
	err := r.pin.Undo()
	r.pin = nil
	return err
}

// pinClient keeps the client off a confined server's CPUs, and notes it
// when there are none left to keep it on.
func (r *run) pinClient(cpus string) error {
	if cpus == "" {
		return nil
	}
	pin, err := server.PinClient(cpus)
	if err != nil {
		return err
	}
	r.pin = pin
	if pin.Note != "" {
		r.addNote(pin.Note)
	}
	return nil
}

func copyFile(from, to string) {
	b, err := os.ReadFile(from)
	if err == nil {
		_ = os.WriteFile(to, b, 0o644)
	}
}

// startServer (re)starts the managed server when the point's build,
// settings or confinement differ from the running server's.
func (r *run) startServer(ctx context.Context, pi int) error {
	want := r.Spec.serverStart(r.Points[pi])
	if r.srv.Running() && r.running.same(want) {
		return nil
	}
	if r.t != nil {
		r.t.Close()
		r.t = nil
	}
	if r.srv.Running() {
		if err := errors.Join(r.srv.Stop(context.WithoutCancel(ctx)), r.unpin()); err != nil {
			return err
		}
	}
	b := r.build(r.Points[pi])
	r.srv = b.Server
	name := r.Spec.KindOf(b.Name)
	if b.Name != "" {
		name += " " + b.Name + " (" + b.Version + ")"
	}
	fmt.Fprintf(r.o.Log, "Starting %s with %s\n", name, settingsLine(want))
	if err := r.srv.Confine(want.confined); err != nil {
		return r.pointError(pi, err)
	}
	if err := r.srv.Start(ctx, want.settings); err != nil {
		if ctx.Err() != nil {
			return err
		}
		return r.pointError(pi, err)
	}
	r.running = want
	if err := r.pinClient(want.confined.CPUs); err != nil {
		return err
	}
	st, err := r.srv.Status(ctx)
	if err != nil {
		return err
	}
	r.facts = telemetry.Server{PID: st.PID, MemoryLimit: want.confined.Memory, CPUs: want.confined.CPUs, MemoryCgroup: st.MemoryCgroup}
	if r.pin != nil {
		r.facts.ClientCPUs = r.pin.CPUs
	}
	if err := r.srv.CreateDB(ctx, DatabaseName); err != nil {
		return fmt.Errorf("create database %s: %w", DatabaseName, err)
	}
	r.url = r.srv.URLFor(DatabaseName)
	return nil
}

// settingsLine is "shared_buffers=1GB; memory 2GB, cpus 1".
func settingsLine(start *serverStart) string {
	line := "default settings"
	if len(start.settings) > 0 {
		line = result.Settings(start.settings)
	}
	if c := start.confined.String(); c != "" {
		line += "; " + c
	}
	return line
}

package cli_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dbrig/dbrig/internal/server/mariadb/mariatest"
	"github.com/dbrig/dbrig/internal/server/postgres/pgtest"
)

// TestEveryWorkloadTargetCommand: every workload × target × command does
// its work, or says in one line, exit 2, that it does not apply: never a
// panic. Each pair gets a database of its own on the real servers the
// tests start, and the commands go in a user's order (build, check, run,
// drop) at the smallest sizes and a short window.
func TestEveryWorkloadTargetCommand(t *testing.T) {
	t.Parallel()
	targets := []struct {
		name string
		db   func(testing.TB) string
	}{
		{"postgres", pgtest.NewDB},
		{"sqlite", func(tb testing.TB) string { return "sqlite:" + filepath.Join(tb.TempDir(), "m.db") }},
		{"mariadb", mariatest.NewDB},
	}
	// done is what each command's output says when it did its work.
	done := map[string]string{"build": "Built ", "check": "Consistency check passed", "run": "Result: ", "drop": "Dropped the "}
	timed := []string{"--vus", "1", "--rampup", "0s", "--duration", "2s", "--no-telemetry"}
	all := []string{"postgres", "sqlite", "mariadb"}
	for _, w := range []struct {
		name  string
		build []string
		run   []string
		// on names the targets the workload runs on; has, the commands
		// it has (every one, when empty).
		on, has []string
	}{
		{name: "tproc-c", build: []string{"--warehouses", "1", "--loaders", "1"}, run: timed, on: all},
		{name: "cpu", run: []string{"--loops", "1000", "--no-telemetry"}, on: all, has: []string{"run"}},
		{name: "block-io", build: []string{"--scale", "1024", "--loaders", "1"}, run: timed, on: all},
		{name: "dvd-store", build: []string{"--size", "1MB", "--loaders", "1"}, run: timed, on: all},
		{name: "dvd-reports", build: []string{"--size", "1MB", "--loaders", "1"}, run: timed, on: all},
	} {
		for _, tg := range targets {
			t.Run(w.name+"/"+tg.name, func(t *testing.T) {
				t.Parallel()
				u := tg.db(t)
				out := filepath.Join(t.TempDir(), "r.json")
				// The second build proves the drop left none of the
				// workload's tables: a build refuses any in its way.
				for _, cmd := range []string{"build", "check", "run", "drop", "build"} {
					args := []string{cmd, w.name, "--target", u}
					switch cmd {
					case "build":
						args = append(args, w.build...)
					case "run":
						args = append(append(args, w.run...), "--json", out)
					}
					o := dbrig(t, args...)
					if strings.Contains(o.stdout+o.stderr, "panic") || strings.Contains(o.stderr, "goroutine") {
						t.Errorf("%s panicked", strings.Join(args, " "))
					}
					switch {
					case len(w.has) > 0 && !slices.Contains(w.has, cmd):
						wantIn(t, cmd, usageError(t, o), "there is nothing to "+cmd)
					case !slices.Contains(w.on, tg.name):
						wantIn(t, cmd, usageError(t, o), "this workload does not run on "+tg.name)
					case o.code != 0:
						t.Errorf("%s: exit %d, want 0:\n%s", strings.Join(args, " "), o.code, o.stderr)
					default:
						wantIn(t, cmd, o.stdout, done[cmd])
					}
				}
			})
		}
	}
}

//go:build unix

package harness

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// Tuning is what the build benchmarks change from PostgreSQL's defaults.
// None of it weakens durability: fsync, synchronous_commit,
// full_page_writes and wal_level stay at their defaults, and CheckServer
// refuses to measure if they are not. The values are the usual ones for a
// benchmark server of this size, so the figures compare with the peers
// measured the same way.
var Tuning = map[string]string{
	// tproc-c's 4 warehouses (~0.5 GB per copy) and dvd-store's size M
	// (~1 GB) fit in cache, so runs measure the engine and the client,
	// not the disk.
	"shared_buffers": "2GB",
	// Fewer, later checkpoints: a load or a run should not be timed
	// through a checkpoint storm caused by the default 1GB / 5min.
	"max_wal_size":       "8GB",
	"checkpoint_timeout": "30min",
	// Room for 8 VUs, the loaders and the harness's own connections.
	"max_connections": "100",
}

// ShownSettings are printed and recorded: the tuning above and the
// durability settings that prove the figures were not bought with it.
var ShownSettings = append(append(append([]string{}, shownTuning...), shownDurability...), "wal_sync_method")

// shownTuning and shownDurability are the two halves of SettingsLine.
var (
	shownTuning     = []string{"shared_buffers", "max_wal_size", "checkpoint_timeout", "max_connections"}
	shownDurability = []string{"fsync", "synchronous_commit", "full_page_writes", "wal_level"}
)

// durable are the settings that must hold their safe values.
var durable = map[string]string{"fsync": "on", "synchronous_commit": "on", "full_page_writes": "on"}

// TunedServer starts a server in the scratch dir with Tuning, checks it
// as CheckServer does and prints what it is. urlFor names a database's
// URL over the unix socket if socket, else over TCP loopback.
func (s *Scratch) TunedServer(ctx context.Context, pgBin string, socket bool) (urlFor func(string) string, f ServerFigures, err error) {
	return s.TunedServerWith(ctx, pgBin, socket, nil)
}

// TunedServerWith is TunedServer with Tuning's values changed, or added
// to, by more.
func (s *Scratch) TunedServerWith(ctx context.Context, pgBin string, socket bool, more map[string]string) (urlFor func(string) string, f ServerFigures, err error) {
	f = ServerFigures{StartedAt: time.Now().UTC(), CPUs: runtime.NumCPU()}
	settings := maps.Clone(Tuning)
	maps.Copy(settings, more)
	srv, err := s.StartServer(ctx, pgBin, settings)
	if err != nil {
		return nil, f, err
	}
	version, err := srv.BinVersion(ctx)
	if err != nil {
		return nil, f, err
	}
	f.ServerVersion = version.Raw
	urlFor, f.Connection = srv.URLFor, "TCP loopback 127.0.0.1"
	if socket {
		urlFor, f.Connection = srv.SocketURLFor, "unix socket "+srv.SocketDir()
	}
	if f.Settings, err = CheckServer(ctx, urlFor("postgres")); err != nil {
		return nil, f, err
	}
	f.print("in " + srv.Dir + ", ")
	return urlFor, f, nil
}

// TargetServer checks a server the benchmark was given, as CheckServer
// does, and prints what it is.
func TargetServer(ctx context.Context, url string) (ServerFigures, error) {
	f := ServerFigures{StartedAt: time.Now().UTC(), CPUs: runtime.NumCPU(), Connection: "--target"}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return f, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if err := conn.QueryRow(ctx, "SELECT 'PostgreSQL ' || current_setting('server_version')").Scan(&f.ServerVersion); err != nil {
		return f, err
	}
	if f.Settings, err = CheckServer(ctx, url); err != nil {
		return f, err
	}
	f.print("")
	return f, nil
}

func (f ServerFigures) print(where string) {
	fmt.Printf("Server: %s, %sconnecting over %s\n", f.ServerVersion, where, f.Connection)
	fmt.Printf("Settings:")
	for _, name := range ShownSettings {
		fmt.Printf(" %s=%s", name, f.Settings[name])
	}
	fmt.Printf("\nMachine: %d CPUs (shared with other work: figures are noisy)\n", f.CPUs)
}

// SettingsLine sums up, under a benchmark's figures, the settings it
// recorded.
func SettingsLine(settings map[string]string) string {
	list := func(names []string) string {
		var out []string
		for _, name := range names {
			out = append(out, name+"="+settings[name])
		}
		return strings.Join(out, " ")
	}
	return fmt.Sprintf("Settings: %s; durability at defaults: %s", list(shownTuning), list(shownDurability))
}

// CheckServer reads ShownSettings as the server reports them, and
// refuses to go on if any durability setting is off: figures bought that
// way would not compare with anything.
func CheckServer(ctx context.Context, url string) (map[string]string, error) {
	got, err := ReadSettings(ctx, url, ShownSettings)
	if err != nil {
		return nil, err
	}
	for name, want := range durable {
		if got[name] != want {
			return nil, fmt.Errorf("%s is %s, not %s: refusing to measure a server that is not durable", name, got[name], want)
		}
	}
	if got["wal_level"] == "minimal" {
		// minimal lets COPY into a fresh table skip WAL, which would flatter the load.
		return nil, errors.New("wal_level is minimal: refusing to measure loads that skip WAL")
	}
	return got, nil
}

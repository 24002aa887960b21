//go:build unix

package postgres

import (
	"context"
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/server"
)

// minMajor names settings that exist only from some PostgreSQL release on.
// A server older than that refuses to start with "unrecognized
// configuration parameter", which says what but not why.
var minMajor = map[string]int{
	"io_method":          18,
	"io_workers":         18,
	"io_combine_limit":   17,
	"io_max_concurrency": 18,
	"debug_io_direct":    16,
}

// Preflight checks, before anything is built or run, that the server and
// the host can take every setting the sweep will ask for: first that each
// name is one PostgreSQL knows, then the version, build and host each
// needs, naming everything that is missing at once.
func (s *Server) Preflight(ctx context.Context, points []map[string]string) error {
	if err := s.CheckSettingNames(ctx, server.PointNames(points)); err != nil {
		return err
	}
	v, err := s.BinVersion(ctx)
	if err != nil {
		return err
	}
	return preflight(points, v, s.Host.Bin, pgConfigure(s.Host.Bin), server.HugePages())
}

// preflight is Preflight's version, build and host checks. configure is
// what the server's pg_config --configure printed ("" when unknown):
// io_uring exists only in builds configured --with-liburing. hugePages is
// the host's reserved huge pages (server.HugePages, -1 when unknown).
func preflight(points []map[string]string, v ServerVersion, binDir, configure string, hugePages int) error {
	var problems []string
	seen := map[string]bool{}
	for _, p := range points {
		for _, name := range slices.Sorted(maps.Keys(p)) {
			value := p[name]
			if major, ok := minMajor[name]; ok && v.Major < major && !seen[name] {
				seen[name] = true
				problems = append(problems, fmt.Sprintf("%s needs PostgreSQL %d or later, and the server in %s is %d.%d (set target.pg_bin or PG_BIN to a newer bin directory)",
					name, major, binDir, v.Major, v.Minor))
			}
			if name == "io_method" && value == "io_uring" && configure != "" && !strings.Contains(configure, "--with-liburing") && !seen["io_uring"] {
				seen["io_uring"] = true
				problems = append(problems, fmt.Sprintf("io_method=io_uring needs a PostgreSQL built --with-liburing, and pg_config in %s shows it was not", binDir))
			}
			if name == "huge_pages" && strings.EqualFold(value, "on") && !seen[name] && hugePages == 0 {
				seen[name] = true
				problems = append(problems, "huge_pages=on needs huge pages reserved, and /proc/meminfo shows HugePages_Total: 0 (as root: sysctl vm.nr_hugepages=N, with N x 2 MB above shared_buffers)")
			}
		}
	}
	if len(problems) > 0 {
		return exitcode.Userf("this sweep cannot run here: %s", strings.Join(problems, "; "))
	}
	return nil
}

// checkNames refuses a name that is a typo of a parameter the
// server's binaries list (known), with the name meant. The list comes from
// `postgres --describe-config`, which needs no cluster and no running
// server. It leaves out developer and read-only parameters
// (jit_expressions, force_parallel_mode...), so a name missing from it is
// refused only when a listed name is within a typo of it; anything else
// reaches the server, which names it in its own refusal at start. Dotted
// names belong to extensions (auto_explain.log_min_duration), which the
// list never holds.
func checkNames(names, known []string) error {
	listed := make(map[string]bool, len(known))
	for _, k := range known {
		listed[strings.ToLower(k)] = true
	}
	for _, name := range names {
		if strings.Contains(name, ".") || listed[strings.ToLower(name)] {
			continue
		}
		if near := server.Closest(name, known); near != "" {
			return exitcode.Userf("unknown PostgreSQL setting %q (did you mean %s?)", name, near)
		}
	}
	return nil
}

// describeConfig lists the parameter names the binaries in binDir know.
// PostgreSQL lets root run --describe-config (it starts no server), so
// unlike the other commands it needs no unprivileged user.
func describeConfig(ctx context.Context, binDir string) ([]string, error) {
	out, err := server.BinOutput(ctx, binDir, "postgres", "--describe-config")
	if err != nil {
		return nil, err
	}
	var names []string
	for _, line := range strings.Split(string(out), "\n") {
		if name, _, ok := strings.Cut(line, "\t"); ok && name != "" {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("postgres --describe-config in %s listed no parameters", binDir)
	}
	return names, nil
}

// pgConfigure is the build's configure line, or "" if pg_config is not there.
func pgConfigure(binDir string) string {
	out, err := exec.Command(filepath.Join(binDir, "pg_config"), "--configure").Output()
	if err != nil {
		return ""
	}
	return string(out)
}

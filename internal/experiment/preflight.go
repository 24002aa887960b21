package experiment

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/dbrig/dbrig/internal/target"
	"github.com/dbrig/dbrig/internal/target/postgres"
)

// minMajor names settings that exist only from some PostgreSQL release on.
// A server older than that refuses to start with "unrecognized
// configuration parameter", which says what but not why.
var minMajor = map[string]int{
	"io_method":          18,
	"io_workers":         18,
	"io_combine_limit":   17,
	"io_max_concurrency": 18,
}

// preflight checks, before anything is built or run, that the server and
// the host can take every setting the sweep will ask for, and names each
// thing that is missing and why, all at once.
//
// configure is what the server's pg_config --configure printed ("" when
// unknown): io_uring exists only in builds configured --with-liburing.
func preflight(points []Point, spec *Spec, v postgres.ServerVersion, binDir, configure, meminfo string) error {
	var problems []string
	seen := map[string]bool{}
	for _, p := range points {
		for name, value := range spec.ServerSettings(p) {
			if major, ok := minMajor[name]; ok && v.Major < major && !seen[name] {
				seen[name] = true
				problems = append(problems, fmt.Sprintf("%s needs PostgreSQL %d or later, and the server in %s is %d.%d (set target.pg_bin or PG_BIN to a newer bin directory)",
					name, major, binDir, v.Major, v.Minor))
			}
			if name == "io_method" && value == "io_uring" && configure != "" && !strings.Contains(configure, "--with-liburing") && !seen["io_uring"] {
				seen["io_uring"] = true
				problems = append(problems, fmt.Sprintf("io_method=io_uring needs a PostgreSQL built --with-liburing, and pg_config in %s shows it was not", binDir))
			}
			if name == "huge_pages" && strings.EqualFold(value, "on") && !seen[name] && hugePagesTotal(meminfo) == 0 {
				seen[name] = true
				problems = append(problems, "huge_pages=on needs huge pages reserved, and /proc/meminfo shows HugePages_Total: 0 (as root: sysctl vm.nr_hugepages=N, with N x 2 MB above shared_buffers)")
			}
		}
	}
	if len(problems) > 0 {
		return target.Userf("this sweep cannot run here: %s", strings.Join(problems, "; "))
	}
	return nil
}

// hugePagesTotal reads HugePages_Total from a /proc/meminfo text; -1 when
// it cannot tell, so that only a known zero stops a sweep.
func hugePagesTotal(meminfo string) int {
	for _, line := range strings.Split(meminfo, "\n") {
		if v, ok := strings.CutPrefix(line, "HugePages_Total:"); ok {
			var n int
			if _, err := fmt.Sscan(strings.TrimSpace(v), &n); err == nil {
				return n
			}
		}
	}
	return -1
}

// pgConfigure is the build's configure line, or "" if pg_config is not there.
func pgConfigure(binDir string) string {
	out, err := exec.Command(filepath.Join(binDir, "pg_config"), "--configure").Output()
	if err != nil {
		return ""
	}
	return string(out)
}

func readMeminfo() string {
	b, _ := os.ReadFile("/proc/meminfo")
	return string(b)
}

// Package parts splits one run over several processes, on one host or
// many (--part i/n): it reads the split, compares what the parts must
// share, measures each part's clock against the target database's, and
// meets the parts at a barrier kept in the target database itself, where
// the first to arrive fixes the run's seed and, once every part is ready,
// the instants they all start, open and close the window at. It knows no
// workload and no database by name: the barrier's SQL is in sql/, per
// dialect, as a workload's is.
package parts

import (
	"strconv"
	"strings"

	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/exitcode"
)

// ParseSpec reads --part's "i/n": part i (1-based) of n, n at least 2.
func ParseSpec(s string) (driver.Part, error) {
	is, ns, ok := strings.Cut(strings.TrimSpace(s), "/")
	i, ierr := strconv.Atoi(is)
	n, nerr := strconv.Atoi(ns)
	if !ok || ierr != nil || nerr != nil {
		return driver.Part{}, exitcode.Userf("--part %q: want i/n, this process's part i of n (e.g. 2/3)", s)
	}
	switch {
	case n == 1:
		return driver.Part{}, exitcode.Userf("--part %q: a run of one part is a run; leave --part out", s)
	case n < 1:
		return driver.Part{}, exitcode.Userf("--part %q: want i/n with n at least 2", s)
	case i < 1 || i > n:
		return driver.Part{}, exitcode.Userf("--part %q: want i/n with i from 1 to %d", s, n)
	}
	return driver.Part{Index: i, Of: n}, nil
}

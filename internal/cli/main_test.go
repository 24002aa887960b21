package cli_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/dbrig/dbrig/internal/catalog"
	"github.com/dbrig/dbrig/internal/server/postgres/pgtest"
	"github.com/dbrig/dbrig/internal/server/servertest"
)

// TestMain gives the tests a catalogue of their own, so that the runs
// they make are not recorded beside the package's source, where the
// default would put it. Its own work runs on one P, as a run of 8 VUs or
// fewer asks (a run that asks more gets more while it lasts): the tests'
// runs overlap all the time, and with both CPUs this binary's in-process
// work crowded the servers and the other packages on a host make test
// keeps saturated (a CI run took 971 s with two, 778 s with one; it had
// one by a leak, before runner.holdProcs).
func TestMain(m *testing.M) {
	runtime.GOMAXPROCS(1)
	dir, err := os.MkdirTemp("", "dbrig-cli-catalog-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	servertest.RemoveAtExit(dir)
	os.Setenv(catalog.EnvURL, "sqlite:"+filepath.Join(dir, "catalog.db"))
	pgtest.Main(m)
}

package cli_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/dbrig/dbrig/internal/catalog"
	"github.com/dbrig/dbrig/internal/server/postgres/pgtest"
	"github.com/dbrig/dbrig/internal/server/servertest"
)

// TestMain gives the tests a catalogue of their own, so that the runs
// they make are not recorded beside the package's source, where the
// default would put it.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "dbrig-cli-catalog-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	servertest.RemoveAtExit(dir)
	os.Setenv(catalog.EnvURL, "sqlite:"+filepath.Join(dir, "catalog.db"))
	pgtest.Main(m)
}

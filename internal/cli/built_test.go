package cli_test

import (
	"testing"

	"github.com/dbrig/dbrig/internal/server/mariadb/mariatest"
	"github.com/dbrig/dbrig/internal/server/postgres/pgtest"
	"github.com/dbrig/dbrig/internal/server/servertest"
)

// sqliteTPROCC is an SQLite file of the test's own holding one warehouse
// of tproc-c, a copy of one that `dbrig build` made once for the test
// binary (servertest.BuiltFile).
func sqliteTPROCC(t *testing.T) string {
	t.Helper()
	return "sqlite:" + servertest.BuiltFile(t, "tproc-c-1", "tprocc.db", func(path string) {
		mustRun(t, "build", "tproc-c", "--target", "sqlite:"+path, "--warehouses", "1")
	})
}

// pgTPROCC is a database of the shared PostgreSQL holding one warehouse of
// tproc-c, a copy of one that `dbrig build` made once for the test binary
// (pgtest.NewBuiltDB).
func pgTPROCC(t *testing.T) string {
	t.Helper()
	return pgtest.NewBuiltDB(t, "tproc_c_1", func(u string) {
		mustRun(t, "build", "tproc-c", "--target", u, "--warehouses", "1")
	})
}

// mariaTPROCC is a database of the shared MariaDB holding one warehouse of
// tproc-c, built for the test (MariaDB has no template databases).
func mariaTPROCC(t *testing.T) string {
	t.Helper()
	u := mariatest.NewDB(t)
	mustRun(t, "build", "tproc-c", "--target", u, "--warehouses", "1")
	return u
}

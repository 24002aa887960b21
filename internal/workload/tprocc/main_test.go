package tprocc

import (
	"testing"

	"github.com/dbrig/dbrig/internal/server/postgres/pgtest"
)

// TestMain stops the shared test servers when the tests end: every kind's,
// so MariaDB's (mariatest) as well as PostgreSQL's.
func TestMain(m *testing.M) { pgtest.Main(m) }

//go:build unix

package postgres

import (
	"testing"

	"github.com/dbrig/dbrig/internal/server/postgres/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

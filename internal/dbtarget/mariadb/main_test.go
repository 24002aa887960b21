package mariadb_test

import (
	"testing"

	"github.com/dbrig/dbrig/internal/server/mariadb/mariatest"
)

func TestMain(m *testing.M) { mariatest.Main(m) }

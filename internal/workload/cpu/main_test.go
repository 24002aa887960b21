package cpu

import (
	"testing"

	"github.com/dbrig/dbrig/internal/target/postgres/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

package mariadb

import (
	"testing"

	"github.com/dbrig/dbrig/internal/telemetry"
)

// TestSessionKinds: rows as MariaDB 10.11's process list shows them. A
// client's statement is foreground, on CPU or in its state; the server's
// own threads are background, and left out while they wait for work.
func TestSessionKinds(t *testing.T) {
	for _, c := range []struct {
		user, command, state string
		kept, background     bool
		backend, class       string
	}{
		{"dbrig", "Query", "Sending data", true, false, "client", "CPU"},
		{"dbrig", "Query", "User sleep", true, false, "client", "State"},
		{"dbrig", "Execute", "Waiting for table metadata lock", true, false, "client", "State"},
		{"event_scheduler", "Daemon", "Waiting on empty queue", false, true, "event scheduler", "State"},
		{"event_scheduler", "Daemon", "Waiting for next activation", false, true, "event scheduler", "State"},
		{"system user", "Slave_SQL", "Slave has read all relay log; waiting for more updates", false, true, "Slave_SQL", "State"},
		{"system user", "Slave_SQL", "Update_rows_log_event::find_row(-1)", true, true, "Slave_SQL", "State"},
		{"system user", "Slave_worker", "", true, true, "Slave_worker", "CPU"},
		{"repl", "Binlog Dump", "Sending binlog event to slave", true, true, "Binlog Dump", "State"},
	} {
		ss, kept := session(c.user, c.command, c.state)
		if kept != c.kept || ss.Background != c.background || ss.Backend != c.backend || ss.Class != c.class {
			t.Errorf("%s %s %q: kept %v, %+v; want kept %v, background %v, backend %q, class %s",
				c.user, c.command, c.state, kept, ss, c.kept, c.background, c.backend, c.class)
		}
	}
}

// TestStateCategory: the process list's states map to the categories every
// target shares.
func TestStateCategory(t *testing.T) {
	for state, want := range map[string]string{
		"Sending data":                    telemetry.WaitCPU,
		"":                                telemetry.WaitCPU,
		"Waiting for table metadata lock": telemetry.WaitLock,
		"Waiting for table level lock":    telemetry.WaitLock,
		"waiting for handler commit":      telemetry.WaitCommit,
		"Waiting for prior transaction to commit": telemetry.WaitCommit,
		"Writing to net": telemetry.WaitClient,
		"User sleep":     telemetry.WaitOther,
	} {
		if got := stateCategory(state); got != want {
			t.Errorf("stateCategory(%q) = %s, want %s", state, got, want)
		}
	}
}

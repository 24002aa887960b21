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
		{"dbrig", "Query", "Executing", true, false, "client", "CPU"},
		{"dbrig", "Query", "User sleep", true, false, "client", "State"},
		{"dbrig", "Execute", "Waiting for table metadata lock", true, false, "client", "State"},
		{"event_scheduler", "Daemon", "Waiting on empty queue", false, true, "event scheduler", "State"},
		{"event_scheduler", "Daemon", "Waiting for next activation", false, true, "event scheduler", "State"},
		{"system user", "Slave_SQL", "Slave has read all relay log; waiting for more updates", false, true, "Slave_SQL", "State"},
		{"system user", "Slave_SQL", "Update_rows_log_event::find_row(-1)", true, true, "Slave_SQL", "State"},
		{"system user", "Slave_worker", "", true, true, "Slave_worker", "CPU"},
		{"repl", "Binlog Dump", "Sending binlog event to slave", true, true, "Binlog Dump", "State"},
	} {
		ss, kept := session(process{client: client{user: c.user}, command: c.command, state: c.state}, true)
		if kept != c.kept || ss.Background != c.background || ss.Backend != c.backend || ss.Class != c.class {
			t.Errorf("%s %s %q: kept %v, %+v; want kept %v, background %v, backend %q, class %s",
				c.user, c.command, c.state, kept, ss, c.kept, c.background, c.backend, c.class)
		}
	}
}

// TestSessionWait: what a session waits on comes first from InnoDB's row
// lock wait, then from its idling in a transaction, then from
// performance_schema's wait, and last from its state.
func TestSessionWait(t *testing.T) {
	for _, c := range []struct {
		p                      process
		class, event, category string
	}{
		{process{command: "Query", state: "Updating", trx: "LOCK WAIT"}, "Lock", "row", telemetry.WaitLock},
		{process{command: "Query", state: "Updating", trx: "LOCK WAIT", wait: "wait/synch/cond/innodb/lock_wait"}, "Lock", "row", telemetry.WaitLock},
		{process{command: "Sleep", trx: "RUNNING", wait: "idle"}, "Client", "idle", telemetry.WaitClient},
		{process{command: "Sleep", trx: "RUNNING"}, "Client", "idle", telemetry.WaitClient},
		{process{command: "Query", state: "Sending data", wait: "wait/io/file/innodb/innodb_data_file", operation: "read"}, "IO", "innodb_data_file read", telemetry.WaitRead},
		{process{command: "Query", state: "Sending data", trx: "RUNNING"}, "CPU", "CPU", telemetry.WaitCPU},
		{process{command: "Query", state: "User sleep"}, "State", "User sleep", telemetry.WaitOther},
	} {
		ss, _ := session(c.p, true)
		if ss.Class != c.class || ss.Event != c.event || ss.Category != c.category {
			t.Errorf("%+v: %s/%s (%s), want %s/%s (%s)", c.p, ss.Class, ss.Event, ss.Category, c.class, c.event, c.category)
		}
	}
	// Without performance_schema's waits, a statement at work may be
	// reading a data file: the process list cannot say it is on CPU.
	for _, state := range []string{"Sending data", "Executing", ""} {
		ss, _ := session(process{command: "Query", state: state}, false)
		if ss.Category != telemetry.WaitEngine || ss.Event != unseenWaits || ss.Class == telemetry.CPUClass {
			t.Errorf("%q without performance_schema: %s/%s (%s), want State/%s (%s), not in the CPU class that DB time on CPU counts", state, ss.Class, ss.Event, ss.Category, unseenWaits, telemetry.WaitEngine)
		}
	}
	if ss, _ := session(process{command: "Query", state: "Waiting for table metadata lock"}, false); ss.Category != telemetry.WaitLock {
		t.Errorf("a lock's state without performance_schema: %s, want %s", ss.Category, telemetry.WaitLock)
	}
}

// TestStateCategory: the process list's states map to the categories every
// target shares.
func TestStateCategory(t *testing.T) {
	for state, want := range map[string]string{
		"Sending data":                    telemetry.WaitCPU,
		"Executing":                       telemetry.WaitCPU,
		"Optimizing":                      telemetry.WaitCPU,
		"init for update":                 telemetry.WaitCPU,
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

// TestInstrumentWait: performance_schema's instruments, as MariaDB 10.11
// names them, map to the categories every target shares.
func TestInstrumentWait(t *testing.T) {
	for _, c := range []struct {
		name, operation        string
		class, event, category string
	}{
		{"wait/io/file/innodb/innodb_data_file", "read", "IO", "innodb_data_file read", telemetry.WaitRead},
		{"wait/io/file/innodb/innodb_data_file", "write", "IO", "innodb_data_file write", telemetry.WaitWrite},
		{"wait/io/file/innodb/innodb_data_file", "sync", "IO", "innodb_data_file write", telemetry.WaitWrite},
		{"wait/io/file/innodb/innodb_log_file", "sync", "IO", "innodb_log_file", telemetry.WaitCommit},
		{"wait/io/file/innodb/innodb_log_file", "write", "IO", "innodb_log_file", telemetry.WaitCommit},
		{"wait/io/file/sql/binlog", "sync", "IO", "binlog", telemetry.WaitCommit},
		{"wait/io/file/innodb/innodb_temp_file", "read", "IO", "innodb_temp_file read", telemetry.WaitRead},
		{"wait/io/file/aria/MAD", "open", "IO", "MAD open", telemetry.WaitOther},
		{"wait/io/socket/sql/client_connection", "recv", "Client", "client_connection", telemetry.WaitClient},
		{"idle", "idle", "Client", "idle", telemetry.WaitClient},
		{"wait/lock/table/sql/handler", "write external", "Lock", "table", telemetry.WaitLock},
		{"wait/lock/metadata/sql/mdl", "", "Lock", "metadata", telemetry.WaitLock},
		{"wait/synch/mutex/innodb/buf_pool_mutex", "lock", "Mutex", "buf_pool_mutex", telemetry.WaitLatch},
		{"wait/synch/rwlock/innodb/index_tree_rw_lock", "exclusive_lock", "RWLock", "index_tree_rw_lock", telemetry.WaitLatch},
		{"wait/synch/sxlock/innodb/index_tree_rw_lock", "shared_lock", "RWLock", "index_tree_rw_lock", telemetry.WaitLatch},
		{"wait/synch/cond/sql/COND_wait_commit", "wait", "Cond", "COND_wait_commit", telemetry.WaitCommit},
		{"wait/synch/cond/sql/Item_func_sleep::cond", "wait", "Cond", "Item_func_sleep::cond", telemetry.WaitOther},
	} {
		class, event, category := instrumentWait(c.name, c.operation)
		if class != c.class || event != c.event || category != c.category {
			t.Errorf("%s %s: %s/%s (%s), want %s/%s (%s)", c.name, c.operation, class, event, category, c.class, c.event, c.category)
		}
	}
}

package postgres

import (
	"testing"

	"github.com/dbrig/dbrig/internal/telemetry"
)

// TestCategory: PostgreSQL's wait events map to the categories every
// target shares, the WAL's among them to commit rather than to IO or
// latches, and a commit's wait for its synchronous standbys to
// replication.
func TestCategory(t *testing.T) {
	for _, c := range []struct{ class, event, want string }{
		{telemetry.CPUClass, telemetry.CPUClass, telemetry.WaitCPU},
		{"Lock", "transactionid", telemetry.WaitLock},
		{"Lock", "tuple", telemetry.WaitLock},
		{"LWLock", "BufferContent", telemetry.WaitLatch},
		{"LWLock", "WALWrite", telemetry.WaitCommit},
		{"BufferPin", "BufferPin", telemetry.WaitLatch},
		{"IO", "DataFileRead", telemetry.WaitRead},
		{"IO", "DataFilePrefetch", telemetry.WaitRead},
		{"IO", "WALSync", telemetry.WaitCommit},
		{"IO", "WALRead", telemetry.WaitOther},
		{"IO", "DataFileExtend", telemetry.WaitWrite},
		{"IPC", "SyncRep", telemetry.WaitReplication},
		{"IPC", "BgWorkerStartup", telemetry.WaitOther},
		{"Client", "ClientRead", telemetry.WaitClient},
		{"Timeout", "PgSleep", telemetry.WaitOther},
	} {
		if got := category(c.class, c.event); got != c.want {
			t.Errorf("category(%s/%s) = %s, want %s", c.class, c.event, got, c.want)
		}
	}
}

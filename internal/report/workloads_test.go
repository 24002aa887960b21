package report

// Schema-1 documents take their metrics' labels and the primary
// transaction from the workload's declaration, so the tests register the
// workloads their fixtures name, as the dbrig command does.
import (
	_ "github.com/dbrig/dbrig/internal/workload/tprocc"
)

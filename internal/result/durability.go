package result

import (
	"path/filepath"

	"github.com/dbrig/dbrig/internal/workload"
)

// Durability is a durability audit's finding: every change the database
// acknowledged during the run, looked up after it (and after any crash
// in it).
type Durability struct {
	// Log is the workload's acknowledgement log, a file beside the
	// document, named relative to the document's directory.
	Log          string `json:"log"`
	Acknowledged int64  `json:"acknowledged"`
	Missing      int64  `json:"missing"`
	// InDoubt commits were sent and never answered: they may or may not
	// have happened, so they count neither as acknowledged nor as lost.
	InDoubt int64 `json:"in_doubt"`
	// MissingNames are the first missing changes, as the workload names
	// them.
	MissingNames []string `json:"missing_names,omitempty"`
	// Consistent is whether the workload's consistency check passed after
	// the audit; absent for a workload without one.
	Consistent *bool `json:"consistent,omitempty"`
	// Nodes are each node's own audit, on a target of several nodes that
	// all take writes, where the figures above are the worst node's;
	// absent on one server.
	Nodes []NodeDurability `json:"nodes,omitempty"`
}

// NodeDurability is one node's audit.
type NodeDurability struct {
	Addr       string `json:"addr"`
	Missing    int64  `json:"missing"`
	Consistent *bool  `json:"consistent,omitempty"`
	// Lost says why the node was not audited: it did not answer.
	Lost string `json:"lost,omitempty"`
}

// NewDurability is the document's record of an audit of the log at path,
// which lies beside the document.
func NewDurability(path string, d workload.Durability, consistent *bool) *Durability {
	return &Durability{Log: filepath.Base(path), Acknowledged: d.Acknowledged, Missing: d.Missing, InDoubt: d.InDoubt,
		MissingNames: d.MissingNames, Consistent: consistent}
}

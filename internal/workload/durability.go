package workload

import (
	"context"
	"io"

	"github.com/dbrig/dbrig/internal/dbtarget"
)

// AckLogger is an opened Run that can log, as it runs, every change the
// database acknowledged as committed, and every commit it sent that was
// never answered (in doubt), in the workload's own format, so that a
// DurabilityAuditor can look them up after a crash: the durability half of
// ACID.
type AckLogger interface {
	// LogAcks has every virtual user opened after it log to w. flushed
	// returns the first error writing w, once the virtual users have
	// closed; until then part of the log may still be in their buffers.
	LogAcks(w io.Writer) (flushed func() error)
}

// DurabilityAuditor is a workload that looks up on a target every change
// an AckLogger's log says the database acknowledged.
type DurabilityAuditor interface {
	AuditDurability(ctx context.Context, t dbtarget.Target, log io.Reader) (Durability, error)
}

// Durability is what a durability audit found.
type Durability struct {
	// Acknowledged is how many acknowledged changes were looked up, and
	// Missing how many of them were not found whole.
	Acknowledged, Missing int64
	// InDoubt is how many commits were sent and never answered: they may
	// or may not have happened, so they are neither looked for nor lost.
	InDoubt int64
	// MissingNames names missing changes as the workload names them, at
	// most MaxMissingNames of them.
	MissingNames []string
}

// MaxMissingNames bounds the names a Durability keeps: enough to find
// the pattern of a loss, few enough for a result document.
const MaxMissingNames = 1000

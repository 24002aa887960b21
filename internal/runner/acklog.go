package runner

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/workload"
)

// A durability audit, as dbrig run --audit-durability and a sweep's
// audit_durability make it: while the run goes, its acknowledgement log
// (AckLog) is a temporary file beside where the result goes; once the
// result is named the log takes its name (AckLogPath), and AuditDurability
// looks up every change it names.

// AckLogPath is where the acknowledgement log of the result at path goes.
func AckLogPath(path string) string { return strings.TrimSuffix(path, ".json") + ".acks" }

// AckLog is a run's acknowledgement log while the run goes: a temporary
// file in the results' directory until the result is named.
type AckLog struct {
	f       *os.File
	flushed func() error
	// kept: Keep has the log, which nothing may delete from then on.
	kept bool
}

// RecordAcks has r, an opened w, log what the database acknowledges into
// a file in dir; a workload without a durability audit is refused.
func RecordAcks(w workload.Workload, r workload.Run, dir string) (*AckLog, error) {
	l, ok := r.(workload.AckLogger)
	if _, audits := w.(workload.DurabilityAuditor); !ok || !audits {
		return nil, exitcode.Userf("%s has no durability audit", w.Name())
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(dir, ".dbrig-acks-*")
	if err != nil {
		return nil, err
	}
	return &AckLog{f: f, flushed: l.LogAcks(f)}, nil
}

// Keep closes the log, once the run's virtual users are done with it,
// and names it after the result at path. It returns where the log is,
// also with an error, when the log could not be written whole or named:
// what it holds is kept all the same.
func (a *AckLog) Keep(path string) (string, error) {
	a.kept = true
	err := errors.Join(a.flushed(), a.f.Chmod(0o644), a.f.Close())
	log := AckLogPath(path)
	if rerr := os.Rename(a.f.Name(), log); rerr != nil {
		log, err = a.f.Name(), errors.Join(err, rerr)
	}
	if err != nil {
		return log, fmt.Errorf("the acknowledgement log: %w", err)
	}
	return log, nil
}

// Discard removes the log of a run that left no result; once Keep has
// it, it is the result's.
func (a *AckLog) Discard() {
	if a.kept {
		return
	}
	a.f.Close()
	os.Remove(a.f.Name())
}

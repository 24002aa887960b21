package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// StateFile is what dbrig records about a managed server in its
// directory, so that another process (dbrig server stop/status) can find
// and judge it. Every kind writes the same record.
const StateFile = "dbrig-server.json"

// Record is what StateFile holds.
type Record struct {
	// Kind is the server's kind, which Attach of another process goes by.
	Kind    string `json:"kind,omitempty"`
	BinDir  string `json:"bin_dir"`
	RunAs   string `json:"run_as,omitempty"`
	Version string `json:"version,omitempty"`
	Port    int    `json:"port,omitempty"`
	// SocketDir is the unix socket's directory (PostgreSQL) or the socket
	// itself (a kind whose server names its socket file).
	SocketDir string            `json:"socket_dir,omitempty"`
	Settings  map[string]string `json:"settings,omitempty"`
	PID       int               `json:"pid,omitempty"`
	Started   time.Time         `json:"started"`
	Stopped   *time.Time        `json:"stopped,omitempty"`
	// LogOffset is where this start's lines begin in the server log.
	LogOffset int64 `json:"log_offset"`
	// Running is true from a successful start until a clean stop: a server
	// that is gone while this holds has crashed.
	Running bool `json:"running"`
	// Memory and CPUs are the confinement (Confinement).
	Memory int64  `json:"memory_bytes,omitempty"`
	CPUs   string `json:"cpus,omitempty"`
	// Topology is a cluster's; nil for a server of its own. A cluster's
	// record is of the whole, in its directory; each node keeps its own
	// in a directory of its own within.
	Topology *Topology `json:"topology,omitempty"`
}

// Confinement is the confinement the state records.
func (st *Record) Confinement() Confinement { return Confinement{Memory: st.Memory, CPUs: st.CPUs} }

func statePath(dir string) string { return filepath.Join(dir, StateFile) }

// ReadState reads the record in dir.
func ReadState(dir string) (*Record, error) {
	var st Record
	if err := ReadJSON(statePath(dir), &st); err != nil {
		return nil, err
	}
	return &st, nil
}

// ReadJSON reads the record at path into v; a file that is not one names
// its path.
func ReadJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// WriteState replaces the record whole, so a reader never sees half of it.
func WriteState(dir string, st *Record) error { return WriteJSON(statePath(dir), st) }

// WriteClusterRecord keeps a cluster's record in dir, for AttachDir: rec
// as the cluster fills it (kind, binaries, user, settings, topology),
// with its binaries' version, whether it runs, and when it started: now,
// or for a stopped cluster when the record there says.
func WriteClusterRecord(ctx context.Context, dir string, rec *Record, running bool, version func(context.Context) (string, error)) error {
	rec.Running, rec.Started = running, time.Now().UTC().Truncate(time.Second)
	if old, err := ReadState(dir); err == nil && !running {
		rec.Started = old.Started
	}
	if v, err := version(ctx); err == nil {
		rec.Version = v
	}
	return WriteState(dir, rec)
}

// WriteJSON replaces the file at path with v whole, through a rename, as
// every record that another process reads is written.
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// WriteStopped records that the server in dir was stopped, or that its
// crash was acknowledged or superseded.
func WriteStopped(dir string) error {
	st, err := ReadState(dir)
	if err != nil {
		// Nothing recorded (a directory from before the state file):
		// nothing to correct either.
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	if !st.Running {
		return nil
	}
	now := time.Now().UTC().Truncate(time.Second)
	st.Running, st.Stopped = false, &now
	return WriteState(dir, st)
}

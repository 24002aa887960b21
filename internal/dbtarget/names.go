package dbtarget

import (
	"crypto/rand"
	"encoding/hex"
)

// SessionNamer is a target that gives the sessions it opens a name that
// every client of the database can see (PostgreSQL's application_name,
// MariaDB's program_name), so that its telemetry tells the run's own
// sessions from other clients', whose work the database's counters count
// with the run's. An opened target names its sessions for itself alone
// (OwnName); NameSessions gives them instead a name that other processes
// share (RunName), and must come before the run opens any session.
type SessionNamer interface {
	NameSessions(name string)
}

// NameSessions names t's sessions where t can.
func NameSessions(t Target, name string) {
	if n, ok := t.(SessionNamer); ok {
		n.NameSessions(name)
	}
}

// OwnName is a name for one process's sessions: "dbrig" and eight random
// hexadecimal digits, which no other process draws.
func OwnName() string {
	b := make([]byte, 4)
	rand.Read(b)
	return "dbrig " + hex.EncodeToString(b)
}

// RunName is the name of the sessions of a run in parts named run
// (--part-run), which every part gives its own. It is what a server keeps
// of it, and reads back: printable ASCII, each other byte a '?', at most
// 63 bytes (PostgreSQL's application_name), so that every part compares
// what it sees with the same name.
func RunName(run string) string {
	name := []byte("dbrig run " + run)
	for i, c := range name {
		if c < ' ' || c > '~' {
			name[i] = '?'
		}
	}
	return string(name[:min(len(name), maxNameBytes)])
}

// maxNameBytes is the longest name PostgreSQL keeps whole.
const maxNameBytes = 63

//go:build unix

package mariadb

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/dbrig/dbrig/internal/server"
)

// Which node founds a cluster that starts again: Galera writes, in each
// node's grastate.dat, the last transaction the node's data holds and,
// on the last node of the cluster to stop cleanly, safe_to_bootstrap: 1.
// A cluster founded from another node would lose what that one had.

// grastate is what a node's grastate.dat says.
type grastate struct {
	// found is false where there is none: a node never started.
	found bool
	// seqno is the last transaction the data holds, -1 where Galera
	// could not tell (a node that did not stop cleanly).
	seqno int64
	safe  bool
}

// grastatePath is the node's grastate.dat.
func (s *Server) grastatePath() string { return filepath.Join(s.DataDir(), "grastate.dat") }

// readGrastate reads the node's grastate.dat.
func (s *Server) readGrastate() (grastate, error) {
	f, err := os.Open(s.grastatePath())
	if errors.Is(err, os.ErrNotExist) {
		return grastate{seqno: -1}, nil
	}
	if err != nil {
		return grastate{}, err
	}
	defer f.Close()
	g := grastate{found: true, seqno: -1}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, value, _ := strings.Cut(sc.Text(), ":")
		value = strings.TrimSpace(value)
		switch strings.TrimSpace(key) {
		case "seqno":
			if g.seqno, err = strconv.ParseInt(value, 10, 64); err != nil {
				return grastate{}, fmt.Errorf("%s: seqno %q", s.grastatePath(), value)
			}
		case "safe_to_bootstrap":
			g.safe = value == "1"
		}
	}
	return g, sc.Err()
}

// markSafe writes safe_to_bootstrap: 1 into the node's grastate.dat,
// which Galera otherwise refuses to found a cluster from: only where no
// node stopped last, cleanly, and this one was found to hold the most.
func (s *Server) markSafe() error {
	b, err := os.ReadFile(s.grastatePath())
	if err != nil {
		return err
	}
	marked := safeLineRE.ReplaceAll(b, []byte("safe_to_bootstrap: 1"))
	// Written over in place, so that it stays the server user's.
	return os.WriteFile(s.grastatePath(), marked, 0o660)
}

var safeLineRE = regexp.MustCompile(`(?m)^safe_to_bootstrap:.*$`)

// pickBootstrap is the index of the node whose data a start founds the
// cluster from, among the nodes' grastates: the one Galera deems safe
// (recorded first, where several are), else the one that holds the most
// (recover tells what a node's grastate does not; recorded first among
// equals), which then must be marked safe. Where no node has started yet
// it is the first, the only one with data.
func pickBootstrap(states []grastate, recorded int, recover func(i int) (int64, error)) (i int, mark bool, err error) {
	best, bestAt := -1, int64(-1)
	better := func(j int, at int64) {
		if best < 0 || at > bestAt || at == bestAt && j == recorded {
			best, bestAt = j, at
		}
	}
	for j, g := range states {
		if g.safe {
			better(j, 0)
		}
	}
	if best >= 0 {
		return best, false, nil
	}
	for j, g := range states {
		if !g.found {
			continue
		}
		at := g.seqno
		if at < 0 {
			if at, err = recover(j); err != nil {
				return 0, false, err
			}
		}
		better(j, at)
	}
	if best < 0 {
		return 0, false, nil
	}
	return best, true, nil
}

// recoveredRE is what mariadbd --wsrep-recover logs of the data's last
// transaction: "WSREP: Recovered position: UUID:SEQNO".
var recoveredRE = regexp.MustCompile(`WSREP: Recovered position: [0-9a-f-]+:(-?\d+)`)

// recoverPosition asks the stopped node's InnoDB, with mariadbd
// --wsrep-recover, for the last transaction its data holds: what a node
// that did not stop cleanly leaves out of its grastate.dat. settings are
// those the node last ran with, which its data may depend on.
func (s *Server) recoverPosition(ctx context.Context, settings map[string]string) (int64, error) {
	if _, err := s.Bin(); err != nil { // the server's user, who runs it
		return 0, err
	}
	names, err := server.SettingOrder(settings, own{s}.Owned)
	if err != nil {
		return 0, err
	}
	logStart, err := s.Host.MakeLog(s.Dir, s.LogPath(), "mariadbd")
	if err != nil {
		return 0, err
	}
	// It opens the server's socket as a start would, and stops before
	// any client could use it; the port stays closed.
	dir, temp, err := server.MakeSocketDir(s.Dir, socketFile, s.Host.Cred)
	if err != nil {
		return 0, err
	}
	if temp {
		defer os.RemoveAll(dir)
	}
	args := append(s.args(filepath.Join(dir, socketFile), 0, names, settings), "--skip-networking", "--wsrep-recover")
	out, err := s.Command(ctx, "mariadbd", args...).CombinedOutput()
	log := server.ReadFrom(s.LogPath(), logStart)
	m := recoveredRE.FindStringSubmatch(log)
	if m == nil {
		return 0, fmt.Errorf("mariadbd --wsrep-recover in %s found no position (%v): %s", s.Dir, err, logExcerpt(log+string(out)))
	}
	return strconv.ParseInt(m[1], 10, 64)
}

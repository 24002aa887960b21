//go:build linux

package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/procfs"
)

// The shaper is the process that delays the packets entering a Net's
// spaces. netem is not in every kernel (this one lacks it), NFQUEUE is:
// an iptables rule in each delayed space hands the packets arriving by
// its veth to a queue, and the shaper accepts each once its delay is over.
// It is the running binary started again with shaperEnv naming the
// server's directory (docker's reexec), so that the dbrig binary and any
// test binary that links this package carry it. It reads what to shape
// from the directory's NetFile, outlives the command that made the network
// (a session of its own, its log in ShaperLog), and ends when Remove stops
// it, or by itself once the record no longer names it.

const shaperEnv = "DBRIG_NET_SHAPER"

// shaperQueue is the NFQUEUE number in every delayed space: a namespace's
// queues are its own, so one number serves them all.
const shaperQueue = 0

// shaperHold is how many packets a space's queue holds at once: what is
// in flight on the link, its rate times its delay, which 16384 GSO-sized
// packets cover far past what a study's nodes send.
const shaperHold = 16384

// shaperReady is what the shaper writes on its fd 3 once every queue is
// bound; anything else there is why it could not start.
const shaperReady = "ready"

func init() {
	if dir := os.Getenv(shaperEnv); dir != "" {
		os.Exit(runShaper(dir))
	}
}

// startShaper starts the shaper for n, records its pid, and returns once
// it has bound every delayed space's queue: the rules that feed the queues
// are added after, so that no packet meets a queue nobody reads.
func (n *Net) startShaper() error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding this program, to start the network shaper: %w", err)
	}
	logPath := filepath.Join(n.Dir, ShaperLog)
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close()
	ready, tell, err := os.Pipe()
	if err != nil {
		return err
	}
	defer ready.Close()
	cmd := exec.Command(exe)
	cmd.Args = []string{"dbrig-net-shaper", n.Dir} // as ps shows it
	cmd.Env = []string{shaperEnv + "=" + n.Dir}
	cmd.Dir = "/"
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.ExtraFiles = []*os.File{tell}
	// A session of its own: a Ctrl-C in the terminal of the command that
	// made the network does not reach it, nor that command's end.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = cmd.Start()
	tell.Close()
	if err != nil {
		return fmt.Errorf("starting the network shaper: %w", err)
	}
	go func() { _ = cmd.Wait() }() // reaps it, should it end while this process runs
	n.ShaperPID = cmd.Process.Pid
	if err := n.save(); err != nil {
		return err
	}
	if err := ready.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		return err
	}
	said, err := io.ReadAll(io.LimitReader(ready, 1024))
	switch msg := strings.TrimSpace(string(said)); {
	case msg == shaperReady:
		return nil
	case msg != "":
		return fmt.Errorf("the network shaper: %s", msg)
	case err != nil:
		return fmt.Errorf("the network shaper did not say it was ready (its log: %s): %w", logPath, err)
	default:
		return fmt.Errorf("the network shaper ended before it was ready: its log is %s", logPath)
	}
}

// stopShaper ends n's shaper, if it still runs; a pid that another
// process took since is left alone.
func (n *Net) stopShaper() error {
	pid := n.ShaperPID
	if pid <= 0 || !isShaper(pid, n.Dir) {
		return nil
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil && err != syscall.ESRCH {
		return fmt.Errorf("stopping the network shaper (pid %d): %w", pid, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := awaitExit(ctx, pid); err != nil {
		return fmt.Errorf("the network shaper (pid %d) did not end: %w", pid, err)
	}
	return nil
}

// isShaper tells whether pid is the shaper of the network in dir, by its
// environment: a zombie's is empty, and it needs no stopping.
func isShaper(pid int, dir string) bool {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return false
	}
	env, err := p.Environ()
	return err == nil && slices.Contains(env, shaperEnv+"="+dir)
}

// runShaper is the shaper's main: it binds a queue in every delayed space
// of the network in dir, says on fd 3 that it is ready (or why not), and
// shapes until an error, or until its network is no longer its own. An
// error ends the shaper, and with it the delayed links: their rules have
// no bypass, so the kernel drops what they queue, and the nodes behind
// them stop talking rather than go on without their delay.
func runShaper(dir string) int {
	// One P: the shaper's goroutines mostly wait in the poller, and more
	// would only spin.
	runtime.GOMAXPROCS(1)
	logger := log.New(os.Stderr, fmt.Sprintf("shaper %d: ", os.Getpid()), log.LstdFlags|log.Lmicroseconds|log.Lmsgprefix)
	ready := os.NewFile(3, "ready")
	spaces, err := bindSpaces(dir, logger)
	if err != nil {
		logger.Print(err)
		fmt.Fprintln(ready, err)
		return 1
	}
	fmt.Fprintln(ready, shaperReady)
	ready.Close()
	for _, s := range spaces {
		logger.Printf("delaying what enters %s by %v", s.name, s.delay)
	}
	err = shape(dir, spaces)
	logger.Print(err)
	if errors.Is(err, errUnowned) {
		return 0
	}
	return 1
}

func bindSpaces(dir string, logger *log.Logger) ([]*shaped, error) {
	n, err := LoadNet(dir)
	if err != nil {
		return nil, err
	}
	var spaces []*shaped
	for _, s := range n.Spaces {
		if s.Delay == 0 {
			continue
		}
		q, err := bindQueue(filepath.Join(netnsDir, s.Name), shaperQueue, shaperHold)
		if err != nil {
			return nil, err
		}
		sp, err := newShaped(s.Name, s.Delay, q, logger)
		if err != nil {
			return nil, err
		}
		spaces = append(spaces, sp)
	}
	return spaces, nil
}

// shape runs every space's shaping until one fails, or the network is no
// longer the shaper's own, which it checks each second.
func shape(dir string, spaces []*shaped) error {
	errc := make(chan error, 1)
	start := time.Now()
	for _, s := range spaces {
		go func() { errc <- s.receive(start) }()
		go func() { errc <- s.release(start) }()
	}
	go func() {
		for range time.Tick(time.Second) {
			if !ownedBy(dir, os.Getpid()) {
				errc <- errUnowned
				return
			}
		}
	}()
	return <-errc
}

// errUnowned ends a shaper whose network's record is gone, or names
// another shaper: no Remove would stop it, and its sockets would keep the
// namespaces alive.
var errUnowned = errors.New("the network's record is gone, or names another shaper: ending")

// ownedBy tells whether the network in dir is still recorded, and not as
// another shaper's (MakeNet records the pid just after the start).
func ownedBy(dir string, pid int) bool {
	n, err := LoadNet(dir)
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	return n.ShaperPID == 0 || n.ShaperPID == pid
}

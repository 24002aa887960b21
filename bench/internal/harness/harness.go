//go:build unix

// Package harness is what the benchmarks under bench/ share: the signal
// handling that always stops their server, a temp dir with a PostgreSQL
// of its own, the dbrig they measure, and child processes timed for the
// CPU they used.
package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/dbrig/dbrig/internal/server/postgres"
	"github.com/jackc/pgx/v5"
)

// Main runs run and exits with its outcome: 0, 1 on an error, 130 when
// interrupted. name prefixes its messages.
//
// Ctrl-C reaches the benchmark's subprocesses too (same process group);
// the first one here cancels run's context, and run's deferred clean-up
// then stops the server, which runs in its own session and would outlive
// us. Later signals are swallowed so the clean-up is not cut short.
// SIGPIPE (output piped to head, say) would otherwise kill us on the next
// write and leave the server running; nobody reads on, so it stops the
// run like Ctrl-C.
func Main(name string, run func(ctx context.Context) error) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGPIPE)
	go func() {
		first := true
		for sig := range sigs {
			if first {
				fmt.Fprintf(os.Stderr, "\n%s: %v: stopping the server and cleaning up\n", name, sig)
				cancel()
				first = false
			} else {
				fmt.Fprintf(os.Stderr, "%s: still cleaning up; the server must be stopped\n", name)
			}
		}
	}()

	err := run(ctx)
	interrupted := ctx.Err() != nil
	cancel()
	if err != nil {
		// Whatever failed after Ctrl-C failed because of it.
		if interrupted {
			fmt.Fprintf(os.Stderr, "%s: interrupted\n", name)
			os.Exit(130)
		}
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
}

// FindRepo returns explicit, or the nearest directory at or above the
// working directory whose go.mod is dbrig's.
func FindRepo(explicit string) (string, error) {
	if explicit != "" {
		return filepath.Abs(explicit)
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.Contains(string(b), "module github.com/dbrig/dbrig\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the dbrig repository: run from it, or pass --repo")
		}
		dir = parent
	}
}

// Scratch is a benchmark's temp dir, and the server it may start there.
type Scratch struct {
	Dir string
	// Server is nil until StartServer.
	Server *postgres.Server
	name   string
	// kept is a dir the benchmark was given (KeptScratch), never removed.
	kept bool
}

// KeptScratch is a Scratch in dir, made if need be, which Close never
// removes: a server created there, and what it holds, serve the next
// run too (StartServer starts a cluster it finds).
func KeptScratch(name, dir string) (*Scratch, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return &Scratch{Dir: dir, name: name, kept: true}, nil
}

// NewScratch makes the temp dir under baseDir ($TMPDIR or /tmp when
// empty); name prefixes the messages of Close.
func NewScratch(name, baseDir string) (*Scratch, error) {
	dir, err := os.MkdirTemp(baseDir, "dbrig-bench-")
	if err != nil {
		return nil, err
	}
	return &Scratch{Dir: dir, name: name}, nil
}

// StartServer creates a cluster in Dir/pg, unless there is one, from the binaries in pgBin
// (see postgres.FindBinDir when empty) and starts it with settings.
func (s *Scratch) StartServer(ctx context.Context, pgBin string, settings map[string]string) (*postgres.Server, error) {
	s.Server = postgres.New(filepath.Join(s.Dir, "pg"), pgBin)
	if err := s.Server.Init(ctx); err != nil {
		return nil, err
	}
	return s.Server, s.Server.Start(ctx, settings)
}

// Close stops the server and removes the temp dir, or keeps it if told
// to, or if the server would not stop: its log says why. It returns err,
// or the failure to stop when err is nil; call it deferred as
// `err = scratch.Close(keep, err)`.
func (s *Scratch) Close(keep bool, err error) error {
	var stopErr error
	if s.Server != nil {
		// A context of its own: the run's may be what was cancelled.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		stopErr = s.Server.Stop(ctx)
	}
	switch {
	case stopErr != nil:
		fmt.Fprintf(os.Stderr, "%s: %v (kept %s)\n", s.name, stopErr, s.Dir)
		if err == nil {
			err = stopErr
		}
	case keep || s.kept:
		fmt.Fprintf(os.Stderr, "Kept %s (server stopped)\n", s.Dir)
	default:
		os.RemoveAll(s.Dir)
	}
	return err
}

// Dbrig returns the dbrig binary to measure: explicit, made absolute, or
// else one built into the temp dir from the repository (see FindRepo).
func (s *Scratch) Dbrig(ctx context.Context, explicit, repo string) (string, error) {
	if explicit != "" {
		return filepath.Abs(explicit)
	}
	repo, err := FindRepo(repo)
	if err != nil {
		return "", err
	}
	fmt.Println("Building dbrig ...")
	return goBuild(ctx, repo, filepath.Join(s.Dir, "dbrig"))
}

// DbrigAt builds the dbrig of git revision rev of the checkout in repo
// (see FindRepo when empty) into the scratch dir, from a worktree made
// there for the build and removed after it.
func (s *Scratch) DbrigAt(ctx context.Context, repo, rev string) (string, error) {
	repo, err := FindRepo(repo)
	if err != nil {
		return "", err
	}
	// A revision may hold a slash (origin/main): the paths take it as _.
	name := strings.ReplaceAll(rev, "/", "_")
	tree := filepath.Join(s.Dir, "src-"+name)
	fmt.Printf("Building dbrig at %s ...\n", rev)
	if out, err := exec.CommandContext(ctx, "git", "-C", repo, "worktree", "add", "-q", "--detach", tree, rev).CombinedOutput(); err != nil {
		return "", fmt.Errorf("git worktree add %s: %w: %s", rev, err, out)
	}
	defer exec.Command("git", "-C", repo, "worktree", "remove", "--force", tree).Run()
	return goBuild(ctx, tree, filepath.Join(s.Dir, "dbrig-"+name))
}

// goBuild builds ./cmd/dbrig of the tree in dir into out.
func goBuild(ctx context.Context, dir, out string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/dbrig")
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build ./cmd/dbrig in %s: %w", dir, err)
	}
	return out, nil
}

// ReadSettings reads the named settings as the server reports them.
func ReadSettings(ctx context.Context, url string, names []string) (map[string]string, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	got := map[string]string{}
	for _, name := range names {
		var v string
		if err := conn.QueryRow(ctx, "SELECT current_setting($1)", name).Scan(&v); err != nil {
			return nil, fmt.Errorf("reading %s: %w", name, err)
		}
		got[name] = v
	}
	return got, nil
}

// Checkpoint is run before each timed phase so that no phase pays for
// the dirty pages of the one before. It is not timed.
func Checkpoint(ctx context.Context, url string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	_, err = conn.Exec(ctx, "CHECKPOINT")
	return err
}

// Command is a child process with its output on ours, which cancelling
// ctx asks to stop with SIGTERM: dbrig then stops cleanly (or at once, if
// Ctrl-C already reached it), and pgbench ends.
func Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 15 * time.Second
	return cmd
}

// Timed runs cmd and returns its wall-clock time and the CPU time (user +
// system) of its process.
func Timed(ctx context.Context, cmd *exec.Cmd) (wall, cpu time.Duration, err error) {
	u, err := Watched(ctx, cmd, nil)
	return u.Wall, u.CPU, err
}

// Usage is what a child process used.
type Usage struct {
	Wall, CPU time.Duration
	// PeakRSS is the process's peak resident set (getrusage's
	// ru_maxrss), in bytes; 0 where the system does not say.
	PeakRSS int64
}

// Watched runs cmd as Timed does and returns what it used. watch, unless
// nil, runs beside the process from its start, given its pid and a
// context that ends when the process has exited; Watched returns after
// watch does.
func Watched(ctx context.Context, cmd *exec.Cmd, watch func(ctx context.Context, pid int)) (Usage, error) {
	began := time.Now()
	err := cmd.Start()
	if err == nil {
		wctx, exited := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			if watch != nil {
				watch(wctx, cmd.Process.Pid)
			}
		}()
		err = cmd.Wait()
		exited()
		<-done
	}
	u := Usage{Wall: time.Since(began)}
	if ctx.Err() != nil {
		return u, ctx.Err()
	}
	if err != nil {
		// The program and its first two arguments name it: "dbrig run tproc-c".
		words := append([]string{filepath.Base(cmd.Path)}, cmd.Args[1:min(len(cmd.Args), 3)]...)
		return u, fmt.Errorf("%s: %w", strings.Join(words, " "), err)
	}
	u.CPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		// ru_maxrss is in KiB, but in bytes on macOS.
		u.PeakRSS = int64(ru.Maxrss)
		if runtime.GOOS != "darwin" {
			u.PeakRSS *= 1024
		}
	}
	return u, nil
}

// WriteFigures writes a benchmark's figures as JSON to path, if one was
// given, and says where.
func WriteFigures(path string, figures any) error {
	if path == "" {
		return nil
	}
	b, err := json.MarshalIndent(figures, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Printf("\nFigures: %s\n", path)
	return nil
}

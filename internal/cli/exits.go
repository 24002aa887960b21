package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/human"
	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/runner"
	"github.com/spf13/pflag"
)

// errorsLong tells what --max-error-rate does.
const errorsLong = `

A run whose errors (transactions failed after their retries) pass
--max-error-rate, 1% of the measured window's transactions by default, fails:
the summary's first line names its error rate, and the exit code is 1. The
transactions in doubt (the commit sent, the connection lost before its
answer) count with the errors: nobody knows that they committed. A window
in which no transaction ended passes.`

// errorBound is --max-error-rate: the share of the window's transactions,
// in %, that may fail before the run does.
type errorBound float64

func (b *errorBound) String() string { return strconv.FormatFloat(float64(*b), 'g', -1, 64) + "%" }

func (b *errorBound) Type() string { return "percent" }

func (b *errorBound) Set(s string) error {
	v, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if err != nil || math.IsNaN(v) || v < 0 || v > 100 {
		return fmt.Errorf("want a share of the transactions from 0%% to 100%%, such as 1%% or 0.1%%, got %q", s)
	}
	*b = errorBound(v)
	return nil
}

// addErrorBoundFlag adds --max-error-rate, at its default.
func addErrorBoundFlag(fs *pflag.FlagSet, b *errorBound, of string) {
	*b = errorBound(result.DefaultMaxErrorPct)
	fs.Var(b, "max-error-rate", "the share of the measured window's transactions that may fail before "+of+" fails, exit code 1 (100% never fails)")
}

// outcome is how a kept run ends: a failure where it failed (its server
// lost, its errors past the bound, a change the database acknowledged
// gone, a threshold missed), else an interruption where a signal cut it
// short. A run that failed fails, cut short or not.
func outcome(doc *result.Document) error {
	switch {
	case doc.ServerLost != nil, doc.ErrorRate != nil && doc.ErrorRate.Exceeded, result.Missed(doc.Thresholds) > 0:
		return &failure{}
	case doc.Durability != nil && durabilityVerdict(doc.Durability) != nil:
		return &failure{}
	case doc.Interrupted:
		return &interrupted{}
	}
	return nil
}

// checkOutput refuses, before anything runs, a result that could not be
// written where the flags ask: --json naming a directory, or a directory
// that is a file or cannot be written in. A disk that fills during the
// run shows only at its end, where writeResult falls back.
func (f *runFlags) checkOutput() error {
	flag, dir := "--results-dir "+f.resultsDir, f.resultsDir
	if f.jsonPath != "" {
		flag, dir = "--json "+f.jsonPath, filepath.Dir(f.jsonPath)
		if st, err := os.Stat(f.jsonPath); err == nil && st.IsDir() {
			return exitcode.Userf("%s is a directory: name the result's file, such as %s", flag, filepath.Join(f.jsonPath, "r.json"))
		}
	}
	if err := writable(dir); err != nil {
		return exitcode.Userf("%s: %v", flag, err)
	}
	return nil
}

// writable says why no file can be written in dir, or in the nearest
// directory above it that exists, where dir would be made; nil where one
// can. It writes a page into a file there, and removes it, so that a full
// disk is seen as well as a directory closed to the user.
func writable(dir string) error {
	for {
		st, err := os.Stat(dir)
		if err == nil && !st.IsDir() {
			return fmt.Errorf("%s is a file, not a directory: the result cannot go in it", dir)
		}
		if err == nil {
			break
		}
		// Below a file, stat says ENOTDIR: the file is what to name.
		parent := filepath.Dir(dir)
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) || parent == dir {
			return err
		}
		dir = parent
	}
	f, err := os.CreateTemp(dir, ".dbrig-probe-*")
	if err == nil {
		_, err = f.Write(make([]byte, 4096))
		err = errors.Join(err, f.Close(), os.Remove(f.Name()))
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	if err != nil {
		return fmt.Errorf("cannot write a file in %s: %w", dir, err)
	}
	return nil
}

// writeResult writes doc to path or, where that fails, to a file of its
// own in the system's temporary directory, and the run's acknowledgement
// log (log, "" without one) goes beside it. It returns where the document
// is ("" nowhere), and why it is not at path.
func writeResult(path string, doc *result.Document, log string) (string, error) {
	err := result.Write(path, doc)
	if err == nil {
		return path, nil
	}
	fallback, ferr := writeFallback(doc, log)
	if ferr != nil {
		return "", fmt.Errorf("the result could not be written to %s (%v), nor in %s (%v)", path, human.OneLine(err), os.TempDir(), human.OneLine(ferr))
	}
	return fallback, fmt.Errorf("the result could not be written to %s (%v): it is at %s instead", path, human.OneLine(err), fallback)
}

// writeFallback writes doc to a new file in the system's temporary
// directory, named as a result in --results-dir would be, with the log at
// log beside it; the log leaves its first place only once the document
// is written.
func writeFallback(doc *result.Document, log string) (string, error) {
	base := strings.TrimSuffix(filepath.Base(defaultPath(os.TempDir(), doc)), ".json")
	f, err := os.CreateTemp(os.TempDir(), base+"-*.json")
	if err != nil {
		return "", err
	}
	f.Close()
	path := f.Name()
	if log != "" {
		if err := copyFile(log, runner.AckLogPath(path)); err != nil {
			os.Remove(path)
			return "", fmt.Errorf("the acknowledgement log: %w", err)
		}
		if doc.Durability != nil {
			doc.Durability.Log = filepath.Base(runner.AckLogPath(path))
		}
	}
	if err := result.Write(path, doc); err != nil {
		os.Remove(path)
		return "", err
	}
	if log != "" {
		os.Remove(log)
	}
	return path, nil
}

// copyFile copies the file at from to a new file to, synced.
func copyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = io.Copy(dst, src)
	if err = errors.Join(err, dst.Sync(), dst.Close()); err != nil {
		os.Remove(to)
	}
	return err
}

// defaultPath is where doc goes in dir when --json does not name a file.
func defaultPath(dir string, doc *result.Document) string {
	if p := doc.Part; p != nil {
		return result.DefaultPartPath(dir, doc.Workload, doc.StartedAt, p.Index, p.Of)
	}
	return result.DefaultPath(dir, doc.Workload, doc.StartedAt)
}

package cli_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/dbrig/dbrig/internal/cli"
	"github.com/dbrig/dbrig/internal/exitcode"
)

// TestPanicIsOneLine: a panic in a command becomes one line that asks for
// a bug report, and exit 3; the stack trace comes only with --debug.
func TestPanicIsOneLine(t *testing.T) {
	wantInternalError(t, "sql block exists missing", func(stderr *bytes.Buffer, trace bool) int {
		return cli.Recovering(stderr, &trace, func() int { panic("sql block exists missing\nsecond line") })
	})
	var stderr bytes.Buffer
	trace := false
	if code := cli.Recovering(&stderr, &trace, func() int { return 2 }); code != 2 || stderr.Len() != 0 {
		t.Errorf("no panic: exit %d and %q, want 2 and nothing", code, stderr.String())
	}
}

// TestGoroutinePanicIsOneLine: a panic on a goroutine of a virtual user
// or a loader comes back to the command as an *exitcode.Panic, wrapped as
// the layers above wrap errors, and becomes the same one line and exit 3
// as a panic on the command's goroutine, its stack (the goroutine's) only
// with --debug.
func TestGoroutinePanicIsOneLine(t *testing.T) {
	var panicked error
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer exitcode.Recover(func(p error) { panicked = p })
		var row []int
		_ = row[len(done)+7]
	}()
	<-done
	err := fmt.Errorf("part 1/2: %w", panicked)
	wantInternalError(t, "runtime error: index out of range [7] with length 0", func(stderr *bytes.Buffer, trace bool) int {
		return cli.ExitCode(err, stderr, trace)
	})
}

// wantInternalError wants report, with --debug (trace) and without, to
// give exit 3 and the one line of an internal error, what panicked in it,
// followed only with --debug by a stack trace from this file.
func wantInternalError(t *testing.T, what string, report func(stderr *bytes.Buffer, trace bool) int) {
	t.Helper()
	for _, trace := range []bool{false, true} {
		var stderr bytes.Buffer
		if code := report(&stderr, trace); code != 3 {
			t.Errorf("debug %v: exit %d, want 3", trace, code)
		}
		line, rest, _ := strings.Cut(stderr.String(), "\n")
		wantIn(t, "the line", line, "dbrig: internal error: "+what+"; this is a bug in dbrig: please report it")
		if hasTrace := strings.Contains(rest, "goroutine") && strings.Contains(rest, "panic_test.go"); hasTrace != trace {
			t.Errorf("debug %v: a stack trace after the line is %v:\n%s", trace, hasTrace, rest)
		}
		if !trace && rest != "" {
			t.Errorf("without --debug, more than one line: %q", stderr.String())
		}
	}
}

// TestHelpNamesExitCodes: --help says what the exit codes mean, and that
// --debug prints an internal error's trace.
func TestHelpNamesExitCodes(t *testing.T) {
	o := mustRun(t, "--help")
	wantIn(t, "help", o.stdout, "3 an internal error")
	wantIn(t, "help", o.stdout, "--debug")
}

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
	for _, trace := range []bool{false, true} {
		var stderr bytes.Buffer
		code := cli.Recovering(&stderr, &trace, func() int { panic("sql block exists missing\nsecond line") })
		if code != 3 {
			t.Errorf("debug %v: exit %d, want 3", trace, code)
		}
		line, rest, _ := strings.Cut(stderr.String(), "\n")
		wantIn(t, "the line", line, "dbrig: internal error: sql block exists missing; this is a bug in dbrig: please report it")
		if hasTrace := strings.Contains(rest, "goroutine") && strings.Contains(rest, "panic_test.go"); hasTrace != trace {
			t.Errorf("debug %v: a stack trace after the line is %v:\n%s", trace, hasTrace, rest)
		}
		if !trace && rest != "" {
			t.Errorf("without --debug, more than one line: %q", stderr.String())
		}
	}
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
	for _, trace := range []bool{false, true} {
		var stderr bytes.Buffer
		if code := cli.ExitCode(err, &stderr, trace); code != 3 {
			t.Errorf("debug %v: exit %d, want 3", trace, code)
		}
		line, rest, _ := strings.Cut(stderr.String(), "\n")
		wantIn(t, "the line", line, "dbrig: internal error: runtime error: index out of range [7] with length 0; this is a bug in dbrig: please report it")
		if hasTrace := strings.Contains(rest, "goroutine") && strings.Contains(rest, "panic_test.go"); hasTrace != trace {
			t.Errorf("debug %v: the goroutine's stack trace after the line is %v:\n%s", trace, hasTrace, rest)
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

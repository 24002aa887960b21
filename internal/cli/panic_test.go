package cli_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/dbrig/dbrig/internal/cli"
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

// TestHelpNamesExitCodes: --help says what the exit codes mean, and that
// --debug prints an internal error's trace.
func TestHelpNamesExitCodes(t *testing.T) {
	o := mustRun(t, "--help")
	wantIn(t, "help", o.stdout, "3 an internal error")
	wantIn(t, "help", o.stdout, "--debug")
}

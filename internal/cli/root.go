// Package cli is dbrig's command line: one file per command.
package cli

import (
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/human"
	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/workload"
	"github.com/spf13/cobra"

	// The targets and workloads register themselves.
	_ "github.com/dbrig/dbrig/internal/dbtarget/mariadb"
	_ "github.com/dbrig/dbrig/internal/dbtarget/postgres"
	_ "github.com/dbrig/dbrig/internal/dbtarget/sqlite"
	_ "github.com/dbrig/dbrig/internal/server/mariadb"
	_ "github.com/dbrig/dbrig/internal/server/postgres"
	_ "github.com/dbrig/dbrig/internal/workload/blockio"
	_ "github.com/dbrig/dbrig/internal/workload/cpu"
	_ "github.com/dbrig/dbrig/internal/workload/dvdstore"
	_ "github.com/dbrig/dbrig/internal/workload/tprocc"
)

// DefaultTarget is the embedded SQLite file a run uses when given none,
// in defaultDir, which is dbrig's own to make (openCreating).
const (
	DefaultTarget = "sqlite:" + defaultDir + "/dbrig.db"
	defaultDir    = "dbrig-data"
)

// targetFlag is --target's usage line, targetLong what its URL forms and
// passwords are, for the help of every command that takes one.
const (
	targetFlag = "PostgreSQL URL or keyword DSN, mariadb:// or mysql:// URL, or sqlite:PATH; again for another node of the same cluster"
	targetLong = `

--target takes postgres://USER@HOST:PORT/DB (or a libpq keyword/value DSN;
PG* environment variables apply), mariadb://USER@HOST:PORT/DB (also mysql://,
or mariadb://USER@/DB?socket=PATH), or sqlite:PATH. A password need not be on
the command line, where every local user can read it: PostgreSQL takes
passfile=PATH (libpq's format) or $PGPASSWORD, MariaDB passfile=PATH (a file
whose first line is the password) or $MYSQL_PWD; a password in the URL wins.
The URLs dbrig server start prints name their server's passfile. A password
never prints, nor is written into a result.`
)

// exitCodes is what --help says about them.
const exitCodes = `

Exit codes: 0 done; 1 a run or check failed, or a run's result could not be
written where asked (it is then in the temporary directory, named); 2
something to change (a flag, a URL, a schema); 3 an internal error, a bug in
dbrig to report (--debug prints its stack trace); 4 interrupted: Ctrl-C or
SIGTERM stopped a run or a sweep early, and what it had is kept, marked
interrupted (a run's second Ctrl-C stops waiting and writes what it has;
its third quits at once, 130, keeping nothing).`

// Main runs dbrig with args and returns the process exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	var trace bool
	return recovering(stderr, &trace, func() int {
		root := newRoot(stdout, stderr, &trace)
		root.SetArgs(args)
		defer func() {
			if root.PersistentFlags().Changed("max-document-size") {
				result.MaxDocumentSize = result.DefaultMaxDocumentSize
			}
		}()
		return exitCode(root.Execute(), stderr, trace)
	})
}

// recovering runs main, and turns a panic in it into one line that asks
// for a bug report, and exitcode.Internal; the stack trace follows only when
// *trace is set (--debug), read after the panic, once the flags are parsed.
func recovering(stderr io.Writer, trace *bool, main func() int) (code int) {
	defer func() {
		if p := recover(); p != nil {
			code = internalError(stderr, p, debug.Stack(), *trace)
		}
	}()
	return main()
}

// internalError reports a panic, value with stack: one line that asks for
// a bug report, the stack after it with --debug (trace); it returns
// exitcode.Internal.
func internalError(stderr io.Writer, value any, stack []byte, trace bool) int {
	fmt.Fprintf(stderr, "dbrig: internal error: %s; this is a bug in dbrig: please report it with the command that ran (--debug adds the stack trace)\n",
		human.FirstLine(fmt.Sprint(value)))
	if trace {
		stderr.Write(stack)
	}
	return exitcode.Internal
}

// exitCode reports err, the command's outcome, and returns the exit code.
// A panic on another goroutine than the command's (a virtual user's, a
// loader's) comes as an *exitcode.Panic, reported as a panic on the
// command's own is, with its stack when trace (--debug) is set.
func exitCode(err error, stderr io.Writer, trace bool) int {
	if err == nil {
		return 0
	}
	var fe *failure
	var p *exitcode.Panic
	switch {
	case errors.As(err, &fe):
		return exitcode.Fail
	case errors.As(err, &p):
		return internalError(stderr, p.Value, p.Stack, trace)
	}
	var ie *interrupted
	if errors.As(err, &ie) {
		if ie.msg != "" {
			fmt.Fprintln(stderr, "dbrig: "+ie.msg)
		}
		return exitcode.Interrupted
	}
	fmt.Fprintln(stderr, "dbrig: "+human.OneLine(err))
	var ue *exitcode.UserError
	if errors.As(err, &ue) || isFlagError(err) {
		return exitcode.Usage
	}
	return exitcode.Fail
}

// failure is a command's verdict (a failed check), already reported.
type failure struct{}

func (*failure) Error() string { return "failed" }

// interrupted is a command a signal stopped before it finished, with
// what it had kept and marked; msg, where set, is its one line.
type interrupted struct{ msg string }

func (e *interrupted) Error() string { return "interrupted: " + e.msg }

// usageError marks errors cobra and pflag raise about the command line.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

func isFlagError(err error) bool {
	var u usageError
	return errors.As(err, &u)
}

func newRoot(stdout, stderr io.Writer, trace *bool) *cobra.Command {
	root := &cobra.Command{
		Use:   "dbrig",
		Short: "A test rig for database performance",
		Long: `dbrig builds benchmark databases, drives them with virtual users, checks
their consistency, and writes every run as a versioned JSON result.

Targets: PostgreSQL (a URL or keyword DSN; PG* environment variables apply),
MariaDB (mariadb://; $MYSQL_PWD holds a password the URL does not) and SQLite
(sqlite:PATH). Without --target, dbrig uses an embedded SQLite
file under ./dbrig-data/.` + exitCodes,
		Example: `  dbrig run tproc-c
  dbrig build tproc-c --target postgres://bench@localhost/bench --warehouses 4
  dbrig run tproc-c --target postgres://bench@localhost/bench --vus 4 --duration 5m`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.PersistentFlags().BoolVar(trace, "debug", false, "on an internal error (exit 3), print its stack trace too")
	maxDoc := root.PersistentFlags().String("max-document-size", human.FormatSize(result.DefaultMaxDocumentSize),
		"the largest result or sweep document a command reads, a `SIZE` such as 4GB; a larger one is refused unread")
	// Set only when given, and set back after the command (Main), so that
	// commands run in one process at once (tests) share the default.
	root.PersistentPreRunE = func(c *cobra.Command, _ []string) error {
		if !c.Flags().Changed("max-document-size") {
			return nil
		}
		n, err := human.ParseSize(*maxDoc)
		if err != nil || n < 1 {
			return exitcode.Userf("--max-document-size %q: want a size such as 512MB or 4GB", *maxDoc)
		}
		result.MaxDocumentSize = n
		return nil
	}
	root.AddCommand(newBuild(), newRun(), newCheck(), newDrop(), newServer(), newSweep())
	root.AddCommand(newReport(), newCompare(), newMerge(), newAudit())
	root.AddCommand(newCatalog(), newRuns(), newHistory(), newRegress(), newServe())
	return root
}

// workloadCommand makes a command ("run", say) with one subcommand per
// registered workload, each carrying that workload's own flags, so that
// "dbrig run tproc-c --help" shows exactly what applies.
func workloadCommand(use, short string, sub func(w workload.Workload, url *string) *cobra.Command) *cobra.Command {
	c := &cobra.Command{
		Use:   use + " WORKLOAD",
		Short: short,
		Args:  cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return exitcode.Userf("name a workload: dbrig %s %s", use, strings.Join(workload.Names(), "|"))
			}
			return exitcode.Userf("unknown workload %q (known: %s)", args[0], strings.Join(workload.Names(), ", "))
		},
	}
	for _, name := range workload.Names() {
		w, _ := workload.New(name)
		var url string
		s := sub(w, &url)
		s.Use = name
		s.Args = cobra.NoArgs
		url = DefaultTarget
		s.Flags().Var(&targetValue{url: &url}, "target", targetFlag)
		if s.Long == "" {
			s.Long = s.Short + "."
		}
		s.Long += targetLong
		c.AddCommand(s)
	}
	return c
}

package exitcode

import (
	"fmt"
	"runtime/debug"
)

// Panic is a panic on one of dbrig's goroutines other than the command's
// (a virtual user's, a loader's), where no recover of the command's can
// reach it: Recover turns it into this error, which goes up to the
// command as any error does, and the CLI reports it as it does a panic of
// its own, in one line with exit code Internal, the stack with --debug.
type Panic struct {
	Value any
	// Stack is the panicking goroutine's.
	Stack []byte
}

func (p *Panic) Error() string { return fmt.Sprintf("internal error: %v", p.Value) }

// Recover, deferred at the top of a goroutine (defer exitcode.Recover(f),
// nothing in between, as recover works only there), hands a panic in it
// to f as a *Panic, and the goroutine ends as if it had returned.
func Recover(f func(error)) {
	if v := recover(); v != nil {
		f(&Panic{Value: v, Stack: debug.Stack()})
	}
}

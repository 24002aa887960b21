package experiment

import (
	"errors"
	"fmt"
	"testing"

	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/result"
)

// TestPointErrorKeepsAPanic: a run's error becomes the sweep's one line
// naming the point, exit 2, but a panic in a run (a virtual user's, a
// loader's) stays the *exitcode.Panic it is, which the command reports as
// a bug, exit 3; the point records it either way.
func TestPointErrorKeepsAPanic(t *testing.T) {
	r := &run{Sweep: &Sweep{Points: []Point{{Params: []Param{{Name: "vus", Value: "4"}}}},
		Doc: &result.Sweep{Points: make([]result.SweepPoint, 1)}, Dir: "out"}}
	var ue *exitcode.UserError
	if err := r.pointError(0, errors.New("refused")); !errors.As(err, &ue) {
		t.Errorf("a run's error: %v, want the user's one line", err)
	}
	var p *exitcode.Panic
	if err := r.pointError(0, fmt.Errorf("run: %w", &exitcode.Panic{Value: "bug"})); !errors.As(err, &p) || errors.As(err, &ue) {
		t.Errorf("a panic: %v, want it kept as a panic", err)
	}
	if got := r.Doc.Points[0].Errors; len(got) != 2 {
		t.Errorf("the point's errors: %q, want both", got)
	}
}

package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/dbrig/dbrig/internal/human"
	"golang.org/x/term"
)

// progress shows a live line on a terminal and, when output goes to a file
// or pipe, a plain line every interval (as pgbench -P does).
type progress struct {
	w        io.Writer
	live     bool
	interval time.Duration
	last     time.Time
	width    int
}

func newProgress(w io.Writer) *progress {
	p := &progress{w: w, interval: 5 * time.Second}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.live = true
	}
	return p
}

// update shows line, which may hold a spec's or a workload's text, with
// what a terminal would act on written out.
func (p *progress) update(line string) {
	line = human.Safe(line)
	if p.live {
		pad := ""
		if n := p.width - len(line); n > 0 {
			pad = strings.Repeat(" ", n)
		}
		p.width = len(line)
		fmt.Fprintf(p.w, "\r%s%s", line, pad)
		return
	}
	if now := time.Now(); now.Sub(p.last) >= p.interval {
		p.last = now
		fmt.Fprintln(p.w, line)
	}
}

// done ends the live line so what follows starts on a fresh one.
func (p *progress) done() {
	if p.live && p.width > 0 {
		fmt.Fprintln(p.w)
		p.width = 0
	}
}

//go:build unix

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/dbrig/dbrig/bench/internal/harness"
)

// PartUsage is what one part's process used, of a run in parts.
type PartUsage struct {
	Part        int     `json:"part"`
	PeakRSS     int64   `json:"peak_rss_bytes"`
	CPUSeconds  float64 `json:"client_cpu_seconds"`
	WallSeconds float64 `json:"wall_seconds"`
}

// runParts runs the point's terminals as --parts processes of one run,
// as several client hosts would, and merges their documents into
// jsonPath. The point's peak RSS is the largest part's; its CPU the
// parts' together, over the longest part's wall time.
func (b *bench) runParts(ctx context.Context, sh shape, target, jsonPath string, p *Point) error {
	n := b.o.parts
	paths := make([]string, n)
	usages := make([]harness.Usage, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for k := range n {
		paths[k] = strings.TrimSuffix(jsonPath, ".json") + fmt.Sprintf("-part%d.json", k+1)
		args := append(b.runArgs(sh, target, paths[k]), "--part", fmt.Sprintf("%d/%d", k+1, n),
			"--part-run", "bench-"+filepath.Base(jsonPath))
		cmd := harness.Command(ctx, b.dbrig, args...)
		if k > 0 {
			// One part's progress is enough on the terminal.
			cmd.Stderr = io.Discard
		}
		said := &lastLine{}
		cmd.Stderr = io.MultiWriter(cmd.Stderr, said)
		wg.Add(1)
		go func() {
			defer wg.Done()
			usages[k], errs[k] = harness.Watched(ctx, cmd, nil)
			if errs[k] != nil && said.line != "" {
				errs[k] = fmt.Errorf("part %d: %w (%s)", k+1, errs[k], said.line)
			}
		}()
	}
	wg.Wait()
	for k, u := range usages {
		if errs[k] != nil {
			return errs[k]
		}
		p.Parts = append(p.Parts, PartUsage{Part: k + 1, PeakRSS: u.PeakRSS, CPUSeconds: u.CPU.Seconds(), WallSeconds: u.Wall.Seconds()})
		p.PeakRSS = max(p.PeakRSS, u.PeakRSS)
		p.CPUSeconds += u.CPU.Seconds()
		p.WallSeconds = max(p.WallSeconds, u.Wall.Seconds())
	}
	p.Cores = p.CPUSeconds / p.WallSeconds
	merge := harness.Command(ctx, b.dbrig, append(append([]string{"merge"}, paths...), "--json", jsonPath)...)
	merge.Stdout = io.Discard
	if err := merge.Run(); err != nil {
		return fmt.Errorf("dbrig merge: %w", err)
	}
	for _, u := range p.Parts {
		fmt.Fprintf(os.Stdout, "part %d: peak RSS %.1f MB, %.1f s of CPU in %.1f s\n", u.Part, mb(u.PeakRSS), u.CPUSeconds, u.WallSeconds)
	}
	return nil
}

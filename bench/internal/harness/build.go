//go:build unix

package harness

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/dbrig/dbrig/internal/workload"
)

// BuildFigures are one `dbrig build`, timed as a whole process.
type BuildFigures struct {
	Seconds    float64 `json:"seconds"`
	CPUSeconds float64 `json:"client_cpu_seconds"`
	// ServerCPUSeconds is the server's process tree's CPU over the build.
	ServerCPUSeconds float64 `json:"server_cpu_seconds"`
	PeakRSS          int64   `json:"peak_rss_bytes"`
	// Rows and MB are what the build says it wrote ("Built ...: R rows,
	// M MB"), Phases its own timings of its steps ("Phases: ...").
	Rows   int64            `json:"rows"`
	MB     float64          `json:"mb"`
	Phases []workload.Phase `json:"phases,omitempty"`
}

// Build runs `dbrig build` with args, its output shown, and measures it;
// serverCPU reads the server's process tree's CPU.
func Build(ctx context.Context, dbrig string, args []string, serverCPU func() (time.Duration, error)) (BuildFigures, error) {
	var f BuildFigures
	cmd := Command(ctx, dbrig, append([]string{"build"}, args...)...)
	var out bytes.Buffer
	cmd.Stdout = io.MultiWriter(os.Stdout, &out)
	before, err := serverCPU()
	if err != nil {
		return f, err
	}
	u, err := Watched(ctx, cmd, nil)
	if err != nil {
		return f, err
	}
	after, err := serverCPU()
	if err != nil {
		return f, err
	}
	f.Seconds, f.CPUSeconds, f.ServerCPUSeconds, f.PeakRSS = u.Wall.Seconds(), u.CPU.Seconds(), (after - before).Seconds(), u.PeakRSS
	if f.Phases, err = ParsePhases(out.String()); err != nil {
		return f, err
	}
	if f.Rows, f.MB, err = parseBuilt(out.String()); err != nil {
		return f, err
	}
	fmt.Printf("Build: %.1f s wall clock, dbrig's CPU %.1f s, the server's %.1f s, dbrig's peak RSS %.0f MB\n",
		f.Seconds, f.CPUSeconds, f.ServerCPUSeconds, float64(f.PeakRSS)/1e6)
	return f, nil
}

// ParsePhases reads the build's "Phases: load 2.90 s, keys 0.91 s" line.
func ParsePhases(out string) ([]workload.Phase, error) {
	rest, ok := lineAfter(out, "Phases: ")
	if !ok {
		return nil, fmt.Errorf("the build printed no phases")
	}
	var phases []workload.Phase
	for _, part := range strings.Split(rest, ", ") {
		var p workload.Phase
		if _, err := fmt.Sscanf(part, "%s %g s", &p.Name, &p.Seconds); err != nil {
			return nil, fmt.Errorf("the build's phases %q: %w", rest, err)
		}
		phases = append(phases, p)
	}
	return phases, nil
}

// parseBuilt reads the rows and MB of the build's "Built tproc-c: 2095893
// rows, 431 MB in 5.3 s" line.
func parseBuilt(out string) (rows int64, mb float64, err error) {
	rest, ok := lineAfter(out, "Built ")
	if !ok {
		return 0, 0, fmt.Errorf("the build printed no \"Built\" line")
	}
	_, counts, _ := strings.Cut(rest, ": ")
	if _, err := fmt.Sscanf(counts, "%d rows, %g MB", &rows, &mb); err != nil {
		return 0, 0, fmt.Errorf("the build's line %q: %w", rest, err)
	}
	return rows, mb, nil
}

// lineAfter is the rest of out's first line that begins with prefix.
func lineAfter(out, prefix string) (string, bool) {
	for _, line := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(line, prefix); ok {
			return rest, true
		}
	}
	return "", false
}

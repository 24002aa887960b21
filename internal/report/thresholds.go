package report

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/dbrig/dbrig/internal/human"
	"github.com/dbrig/dbrig/internal/result"
)

// ThresholdLine is a threshold's verdict in one line: PASS or FAIL, the
// threshold, what the window measured and, of a metric, which side's
// figure it judged.
func ThresholdLine(r result.ThresholdResult) string {
	return fmt.Sprintf("%-4s %s: %s%s", verdict(r), r.Threshold, measured(r), judged(r))
}

// judged names the side of a metric a threshold judged: " (client)", "
// (database)"; "" for any other threshold.
func judged(r result.ThresholdResult) string {
	switch r.Side {
	case result.SideClient:
		return " (client)"
	case result.SideDB:
		return " (database)"
	}
	return ""
}

func verdict(r result.ThresholdResult) string {
	switch {
	case r.Unjudged:
		return "SKIP"
	case r.Met:
		return "PASS"
	}
	return "FAIL"
}

// measured is the figure a threshold was held to, in its unit, or why
// there is none.
func measured(r result.ThresholdResult) string {
	if r.Measured == nil {
		return r.Note
	}
	v := *r.Measured
	s := fmtValue(v)
	if v == math.Trunc(v) && r.Unit == "" { // a count
		s = human.Thousands(v)
	}
	switch r.Unit {
	case "":
		return s
	case "%":
		return s + "%"
	}
	return s + " " + r.Unit
}

// thresholdsText writes the run's thresholds, a line each.
func thresholdsText(w io.Writer, d *result.Document) {
	if len(d.Thresholds) == 0 {
		return
	}
	fmt.Fprintf(w, "Thresholds: %s\n", thresholdsCount(d.Thresholds))
	for _, r := range d.Thresholds {
		fmt.Fprintln(w, "  "+ThresholdLine(r))
	}
}

// thresholdsCount is "all 3 met", "1 of 3 missed" or, of an
// interrupted run's, "none of 3 judged".
func thresholdsCount(rs []result.ThresholdResult) string {
	judged := 0
	for _, r := range rs {
		if !r.Unjudged {
			judged++
		}
	}
	switch n := result.Missed(rs); {
	case judged == 0:
		return fmt.Sprintf("none of %d judged", len(rs))
	case n > 0:
		return fmt.Sprintf("%d of %d missed", n, judged)
	}
	return fmt.Sprintf("all %d met", judged)
}

// thresholdsBlock is the run's thresholds as a table; false when it had none.
func thresholdsBlock(d *result.Document) (block, bool) {
	if len(d.Thresholds) == 0 {
		return block{}, false
	}
	t := &table{Head: heads("threshold", "#measured", "result"),
		Caption: "The user's thresholds (--threshold, a sweep's thresholds) held to the measured window: " + thresholdsCount(d.Thresholds) + "."}
	for _, r := range d.Thresholds {
		v := verdict(r)
		t.Rows = append(t.Rows, row{Cells: []cell{{Text: r.Threshold}, num(measured(r) + judged(r)), {Text: v, Class: strings.ToLower(v)}}})
	}
	return block{Heading: "Thresholds", Table: t}, true
}

// sweepThresholdsBlock is each run's verdict on the sweep's thresholds,
// a row each; false when the sweep had none.
func sweepThresholdsBlock(s *result.Sweep) (block, bool) {
	t := &table{Head: heads("point", "repetition", "threshold", "#measured", "result")}
	var all []result.ThresholdResult
	for i, pt := range s.Points {
		for rep, rs := range pt.Thresholds {
			for _, r := range rs {
				v := verdict(r)
				t.Rows = append(t.Rows, row{Cells: []cell{{Text: fmt.Sprintf("%d (%s)", i+1, paramsLabel(s.Varied, pt.Params))},
					num(fmt.Sprint(rep + 1)), {Text: r.Threshold}, num(measured(r) + judged(r)), {Text: v, Class: strings.ToLower(v)}}})
			}
			all = append(all, rs...)
		}
	}
	if len(all) == 0 {
		return block{}, false
	}
	t.Caption = "The spec's thresholds held to each run's measured window: " + thresholdsCount(all) + "."
	return block{Heading: "Thresholds", Table: t}, true
}

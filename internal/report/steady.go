package report

import (
	"fmt"
	"strings"

	"github.com/dbrig/dbrig/internal/result"
)

// truncShade is the seconds of the window MSER-5 truncated as warm-up.
const truncShade = "rgba(41, 128, 185, 0.16)"

// steadyLine is the run's steady-state sentence, "" where there is
// nothing to judge: recorded with the run, or computed from an older
// document's series.
func steadyLine(d *result.Document) string {
	if s := d.SteadyState(); s != nil {
		return s.Line()
	}
	return ""
}

// steadyBlock is the run page's Steady state section: the sentence, and
// how it was judged.
func steadyBlock(d *result.Document) (block, bool) {
	s := d.SteadyState()
	if s == nil {
		return block{}, false
	}
	return block{Heading: "Steady state", Notes: []string{s.Line(),
		fmt.Sprintf("Judged on the window's completions per second (client side, all types) in batches of 5 s: MSER-5's truncation point (White 1997; White, Cobb & Spratt 2000), read as no steady state when it is past half the window and the seconds it cuts move the mean by 5%% or more; then a least-squares line through the batches kept (Kelton & Law 1983), a trend when its 95%% interval excludes 0 and it changes by 5%% or more. Ramp-up: %gs. A minute of steady noise is still judged unsteady about one time in 13: repetitions tell more than one run. A window with a stall or an outage in it is not steady, and MSER-5 is not asked.", s.Rampup)}}, true
}

// steadyMarks shades on the throughput chart the window's seconds that
// MSER-5 truncated as warm-up, where the verdict keeps them out; it
// returns the caption's sentence for them.
func steadyMarks(d *result.Document, plugins obj) string {
	s := d.SteadyState()
	if s == nil || s.SuggestedRampup == 0 {
		return ""
	}
	var from, to float64
	k := 0
	for _, pt := range d.Series {
		if pt.Phase != "measure" {
			continue
		}
		if k == 0 {
			from = pt.T - 1
		}
		if k++; k == s.Truncated {
			to = pt.T
			break
		}
	}
	span := obj{"from": from, "to": to, "label": "MSER-5 warm-up", "color": truncShade}
	shade, _ := plugins["spanShade"].(obj)
	if shade == nil {
		shade = obj{}
		plugins["spanShade"] = shade
	}
	spans, _ := shade["spans"].([]obj)
	shade["spans"] = append(spans, span)
	return fmt.Sprintf(" Shaded blue: the window's first %d s, which MSER-5 truncated as warm-up (see Steady state).", s.Truncated)
}

// SweepSteadyLines say whether a sweep's windows were steady: a line for
// the runs judged, and a line for each run that was not steady.
func SweepSteadyLines(s *result.Sweep) []string {
	judged, steady := 0, 0
	var lines []string
	for i, p := range s.Points {
		j, k := countSteady(p.Steady)
		judged, steady = judged+j, steady+k
		for rep, st := range p.Steady {
			if st != nil && st.Verdict != result.SteadyOK && st.Verdict != result.SteadyShort {
				lines = append(lines, fmt.Sprintf("Point %d (%s), repetition %d: %s", i+1, paramsLabel(s.Varied, p.Params), rep+1,
					strings.TrimPrefix(st.Line(), "Steady state: ")))
			}
		}
	}
	if judged == 0 {
		return nil
	}
	head := fmt.Sprintf("Steady state (MSER-5): %d of %d runs judged had a steady window.", steady, judged)
	return append([]string{head}, lines...)
}

// countSteady counts the repetitions MSER-5 judged, and those steady.
func countSteady(sts []*result.Steady) (judged, steady int) {
	for _, st := range sts {
		if st == nil || st.Verdict == result.SteadyShort {
			continue
		}
		judged++
		if st.Verdict == result.SteadyOK {
			steady++
		}
	}
	return judged, steady
}

// steadyCell is a sweep point's count of steady windows among its
// repetitions judged, "—" where none was.
func steadyCell(p result.SweepPoint) cell {
	judged, steady := countSteady(p.Steady)
	if judged == 0 {
		return num("—")
	}
	c := num(fmt.Sprintf("%d of %d", steady, judged))
	if steady < judged {
		c.Class = "num bad"
	}
	return c
}

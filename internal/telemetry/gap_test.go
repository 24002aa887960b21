package telemetry

import "testing"

// TestGapOverARestart: a read that waited for a restarting server (it
// succeeded on the new one, in the sample in which the host lost the old)
// leaves a gap from the last read before it, and the new server's pid,
// found at the next sample, goes to that gap; when the read after it
// fails, it was of the old server, and the gap goes on. A failed read opens one, a
// late read makes one, and a read on time makes none.
func TestGapOverARestart(t *testing.T) {
	type read struct {
		t    float64
		ok   bool
		pid  int
		lost bool
	}
	for _, c := range []struct {
		name  string
		reads []read
		want  []Gap
	}{
		{"steady", []read{{0.01, true, 0, false}, {1.01, true, 0, false}, {2.02, true, 0, false}}, nil},
		{"read across the restart, pid next", []read{{2.7, true, 0, false}, {4.7, true, 0, true}, {4.99, true, 77, false}},
			[]Gap{{From: 2.7, To: 4.7, ServerPID: 77}}},
		{"read before the loss, then none", []read{{1.01, true, 0, false}, {1.95, true, 0, true}, {2.95, false, 0, false}, {3.96, true, 77, false}},
			[]Gap{{From: 1.01, To: 3.96, ServerPID: 77}}},
		{"failed read", []read{{1.01, true, 0, false}, {2.01, false, 0, true}, {3.02, true, 77, false}},
			[]Gap{{From: 1.01, To: 3.02, ServerPID: 77}}},
		{"late read", []read{{1.01, true, 0, false}, {3.61, true, 0, false}},
			[]Gap{{From: 1.01, To: 3.61}}},
		{"pid with no gap", []read{{1.01, true, 0, false}, {2.01, true, 77, false}},
			[]Gap{{From: 1.01, To: 2.01, ServerPID: 77}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &Recorder{gapFrom: -1, rec: Recording{Interval: 1}}
			for _, rd := range c.reads {
				r.gap(rd.t, rd.ok, rd.pid, rd.lost)
			}
			if len(r.rec.Gaps) != len(c.want) {
				t.Fatalf("gaps %+v, want %+v", r.rec.Gaps, c.want)
			}
			for i, g := range r.rec.Gaps {
				if g != c.want[i] {
					t.Errorf("gap %d: %+v, want %+v", i, g, c.want[i])
				}
			}
		})
	}
}

package report

import (
	"cmp"
	"maps"
	"slices"

	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/telemetry"
)

// explainHTML is the run's telemetry sections with their charts: sessions
// by wait class over the window, and the host's CPU and data disk over the
// whole run (the ramp-up shaded).
func explainHTML(p *page, d *result.Document) []block {
	rec := d.Telemetry
	if rec == nil {
		return nil
	}
	s := telemetry.Summarize(rec)
	blocks := explainBlocks(d, s)
	for i := range blocks {
		b := &blocks[i]
		switch b.key {
		case waitsKey:
			plugins := obj{}
			gaps := gapMarks(rec, plugins)
			b.Charts = []chartRef{waitsChart(p, rec, plugins)}
			b.ChartCaption = "Average active sessions in each interval of the measured window, by wait class." + gaps
		case replicasKey:
			charts, marks := replicaCharts(p, d)
			b.Charts = charts
			b.ChartCaption = "Each replica's lag over the run: its flush lag (solid) and replay lag (dashed), log scale, and how far behind the primary's log it was; a break in a line is a stretch without its readings (the primary could not be read, or the replica did not stream). Shaded: before the measured window." + marks
		case membersKey:
			charts, marks := memberCharts(p, d)
			b.Charts = charts
			b.ChartCaption = "Each node's certification failures per second, and the share of each interval flow control paused it, over the run; a break in a line is a stretch without its readings (a node lost). Shaded: before the measured window." + marks
		case nodesKey:
			chart, marks := nodeChart(p, d)
			b.Charts = []chartRef{chart}
			b.ChartCaption = "Each node's CPU over the run, in % of all CPUs: the tree of its root process; a break in a line is a stretch without its readings (a node lost, or its new process not yet read twice). Shaded: before the measured window." + marks
		case cpusKey:
			plugins := beforeWindow(rec)
			gaps := gapMarks(rec, plugins)
			b.Charts = []chartRef{cpuChart(p, rec, plugins)}
			server := "the server's processes"
			if len(s.Host.Nodes) > 0 {
				server = "each node of the server's (see Cluster nodes)"
			}
			b.ChartCaption = "The host's CPU time over the run, in % of all CPUs: the client (dbrig), " + server + ", everything else, and time lost to IO wait and to the hypervisor (steal). Shaded: before the measured window." + gaps
			if c, ok := diskChart(p, rec, s.Host); ok {
				b.Charts = append(b.Charts, c)
				b.ChartCaption += " Right: the data disk's IOs per second and its mean read latency."
			}
		}
	}
	return blocks
}

// area is one stacked series of a time chart, in the palette's i-th
// colour.
func area(label string, i int, data []obj) obj { return areaIn(label, color(i), data) }

// areaIn is one stacked series of a time chart, in colour c.
func areaIn(label, c string, data []obj) obj {
	return obj{"label": label, "data": data, "borderColor": c, "backgroundColor": fade(c, 0.7),
		"fill": "stack", "borderWidth": 1, "pointRadius": 0, "pointHitRadius": 6, "tension": 0}
}

// timeChart is a line chart over seconds since the run's start; scales
// holds its y axes.
func timeChart(p *page, label, title string, sets []obj, scales, plugins obj) chartRef {
	plugins["title"] = chartTitle(title)
	plugins["tooltip"] = obj{"mode": "index", "intersect": false}
	scales["x"] = obj{"type": "linear", "title": axisTitle("seconds since start"), "ticks": obj{"precision": 0}}
	return p.addChart(label, false, obj{
		"type": "line",
		"data": obj{"datasets": sets},
		"options": obj{
			"interaction": obj{"mode": "index", "intersect": false},
			"scales":      scales,
			"plugins":     plugins,
		},
	})
}

// stackedY is a y axis whose series stack.
func stackedY(title string) obj {
	return obj{"y": obj{"beginAtZero": true, "stacked": true, "title": axisTitle(title)}}
}

func waitsChart(p *page, rec *telemetry.Recording, plugins obj) chartRef {
	totals := map[string]int{}
	for _, b := range rec.DB.Sessions.Buckets {
		for k, n := range b.Counts {
			totals[telemetry.Wait{Name: k}.Class()] += n
		}
	}
	classes := slices.SortedFunc(maps.Keys(totals), func(a, b string) int {
		return cmp.Or(cmp.Compare(totals[b], totals[a]), cmp.Compare(a, b))
	})
	data := make([][]obj, len(classes))
	for _, b := range rec.DB.Sessions.Buckets {
		if !rec.InWindow(b.T) || b.Samples == 0 {
			continue
		}
		per := map[string]int{}
		for k, n := range b.Counts {
			per[telemetry.Wait{Name: k}.Class()] += n
		}
		for i, c := range classes {
			data[i] = append(data[i], obj{"x": b.T, "y": float64(per[c]) / float64(b.Samples)})
		}
	}
	sets := make([]obj, len(classes))
	for i, c := range classes {
		sets[i] = area(c, i, data[i])
	}
	return timeChart(p, "active sessions by wait class", "Active sessions by wait class", sets, stackedY("average active sessions"), plugins)
}

// cpuChart stacks the host's CPU time: the client, the server (each of
// its nodes, on a server of several), the rest, IO wait and steal.
func cpuChart(p *page, rec *telemetry.Recording, plugins obj) chartRef {
	var client, server, other, iowait, steal []obj
	names := nodeNames(rec)
	nodes := make([][]obj, len(names))
	hasServer := false
	for _, s := range charted(rec) {
		srv := 0.0
		if s.Server != nil {
			srv, hasServer = *s.Server, true
		}
		pt := func(v float64) obj { return obj{"x": s.T, "y": max(v, 0)} }
		if len(names) > 0 {
			// A node not read is no CPU of the server's: 0, so that the
			// stack holds.
			srv = 0
			for i, name := range names {
				srv += s.Nodes[name]
				nodes[i] = append(nodes[i], pt(s.Nodes[name]))
			}
		}
		client = append(client, pt(s.Client))
		server = append(server, pt(srv))
		other = append(other, pt(s.CPU.Busy()-s.Client-srv))
		iowait = append(iowait, pt(s.CPU.IOWait))
		steal = append(steal, pt(s.CPU.Steal))
	}
	sets := []obj{area("client", 0, client)}
	switch {
	case len(names) > 0:
		for i, name := range names {
			sets = append(sets, areaIn(name, nodeColor(i), nodes[i]))
		}
	case hasServer:
		sets = append(sets, area("server", 1, server))
	}
	gray := area("other", 0, other)
	gray["borderColor"], gray["backgroundColor"] = "#8a8f98", fade("#8a8f98", 0.5)
	sets = append(sets, gray, area("iowait", 5, iowait), area("steal", 3, steal))
	y := stackedY("% of all CPUs")
	y["y"].(obj)["max"] = 100
	return timeChart(p, "host CPU over time", "Host CPU", sets, y, plugins)
}

// diskChart draws the data disk (or the busiest) over the run; false
// when the host recorded no disks.
func diskChart(p *page, rec *telemetry.Recording, h *telemetry.HostSummary) (chartRef, bool) {
	if h.Data == nil {
		return chartRef{}, false
	}
	device := h.Data.Device
	var reads, writes, await []obj
	for _, s := range charted(rec) {
		for _, d := range s.Disks {
			if d.Device == device {
				reads = append(reads, obj{"x": s.T, "y": d.ReadIOPS})
				writes = append(writes, obj{"x": s.T, "y": d.WriteIOPS})
				await = append(await, obj{"x": s.T, "y": d.ReadAwaitMs})
			}
		}
	}
	if reads == nil {
		return chartRef{}, false
	}
	line := func(label string, i int, data []obj, axis string) obj {
		l := seriesLine(label, color(i), data)
		l["yAxisID"] = axis
		return l
	}
	sets := []obj{line("reads/s", 0, reads, "y"), line("writes/s", 1, writes, "y"), line("read latency ms", 2, await, "y1")}
	return timeChart(p, "data disk over time", "Data disk "+device, sets, obj{
		"y":  obj{"beginAtZero": true, "title": axisTitle("IOs per second")},
		"y1": obj{"beginAtZero": true, "position": "right", "grid": obj{"drawOnChartArea": false}, "title": axisTitle("read latency, ms")},
	}, beforeWindow(rec)), true
}

// charted are the host samples a time chart draws: not the short ones
// the window's edges cut off, whose few clock ticks make rates jump.
func charted(rec *telemetry.Recording) []telemetry.HostSample {
	var out []telemetry.HostSample
	for _, s := range rec.Host.Samples {
		if s.DT >= rec.Interval/4 {
			out = append(out, s)
		}
	}
	return out
}

// beforeWindow shades what came before the measured window.
func beforeWindow(rec *telemetry.Recording) obj {
	return obj{"rampShade": obj{"until": rec.Window[0], "label": "before the window"}}
}

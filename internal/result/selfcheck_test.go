package result

import (
	"strings"
	"testing"
)

// Any document, a run's, a part's or a merged one, checks itself: as
// dbrig wrote it, it passes; edited, its first contradiction is one line
// that names the field.
func TestSelfCheck(t *testing.T) {
	run := func() *Document {
		d, err := FromRun(sampleRun())
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	part := func() *Document {
		docs, _ := newSplit(t, 100).docs(t, 2)
		return docs[0]
	}
	for _, c := range []struct {
		name string
		doc  func() *Document
		edit func(d *Document)
		want string // "" passes
	}{
		{"run", run, func(*Document) {}, ""},
		{"part", part, func(*Document) {}, ""},
		{"merged", func() *Document { return mergedSample(t) }, func(*Document) {}, ""},
		{"count", run, func(d *Document) { d.Transactions[0].Count++ }, "transactions.t1.count is 101, but its histogram holds 100 latencies"},
		{"errors", run, func(d *Document) { d.Transactions[0].Errors = -1 }, "transactions.t1.errors is -1: a count is never negative"},
		{"histogram", run, func(d *Document) { d.Transactions[0].Histogram = "x" }, "transactions.t1.histogram does not decode"},
		{"errors by class", run, func(d *Document) { d.ErrorClasses = map[string]int64{"retry": -2} }, "errors_by_class.retry is -2"},
		{"second's errors", run, func(d *Document) { d.Series[0].Errors = -3 }, "series at 1s: errors is -3"},
		{"part's config", part, func(d *Document) { d.Config["mode"] = "sql" }, "config no longer hashes to part.config_sha256"},
		{"part's vus", part, func(d *Document) { d.Config["vus"] = 4.0; d.Part.ConfigSHA256 = agreedHash(d.Config, d.Part.Agreed) },
			"part.vus is 2, but part 2 of 3's share of config.vus 4 is 1"},
		{"part's index", part, func(d *Document) { d.Part.Index = 4 }, "part.index 4 of part.of 3 is no part of a run"},
		{"part's flushes", part, func(d *Document) { d.Part.EndFlushes = -1 }, "part.end_flushes is -1"},
		{"part's connections", part, func(d *Document) { d.Part.Connections = 1 }, "part.connections is 1, but the run's config: no \"connections\""},
		{"two members mark", func() *Document { return mergedSample(t) }, func(d *Document) { d.Parts.Members[2].Part.Marker = true },
			"parts.members: part 1 and part 3 both claim the database's marks"},
		{"marker moved", func() *Document { return mergedSample(t) }, func(d *Document) { d.Parts.Marker = 2 },
			"parts.marker is 2, but the member that took the database's marks is part 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := c.doc()
			c.edit(d)
			err := d.SelfCheck()
			switch {
			case c.want == "" && err != nil:
				t.Errorf("SelfCheck() = %v, want none", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n")):
				t.Errorf("SelfCheck() = %v, want one line with %q", err, c.want)
			}
		})
	}
}

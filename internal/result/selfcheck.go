package result

import (
	"fmt"
	"maps"

	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/latency"
	"github.com/dbrig/dbrig/internal/parts"
	"github.com/dbrig/dbrig/internal/workload"
)

// A document is anyone's file, and dbrig merge and report take nothing in
// it on trust that the document itself can contradict: each figure is
// checked against another that dbrig wrote beside it. A check's finding
// is one line that names the field, as a path into the JSON.

// SelfCheck returns the first contradiction within d: a part's
// configuration that no longer hashes to what its parts agreed on, a
// count that is negative or that differs from its histogram's, a part's
// VUs that are not its share of the run's, marks held by a part that did
// not take them.
func (d *Document) SelfCheck() error {
	if err := d.checkConfigHash(); err != nil {
		return err
	}
	return d.checkFigures()
}

// checkConfigHash recomputes a part's configuration hash from its
// configuration and what it agreed on beyond it. A document of any other
// kind has none; a part's from before dbrig kept Agreed cannot be checked.
func (d *Document) checkConfigHash() error {
	p := d.Part
	if p == nil || p.Agreed == nil {
		return nil
	}
	if sha := agreedHash(d.Config, p.Agreed); sha != p.ConfigSHA256 {
		return fmt.Errorf("config no longer hashes to part.config_sha256 (%s, not %s): one of them was edited after the run",
			shortID(sha), shortID(p.ConfigSHA256))
	}
	return nil
}

// agreedHash is the hash of what the parts of a run agreed on, as the
// barrier made it: the configuration but for its per-host keys, and the
// rest of what was agreed.
func agreedHash(cfg, agreed map[string]any) string {
	all := sharedConfig(cfg)
	maps.Copy(all, agreed)
	_, sha := parts.Canonical(all)
	return sha
}

// checkFigures checks d's counts and its part's section.
func (d *Document) checkFigures() error {
	for _, tx := range d.Transactions {
		if err := tx.check(); err != nil {
			return err
		}
	}
	for name, n := range d.Counters {
		if n < 0 {
			return fmt.Errorf("counters.%s is %d: a count is never negative", name, n)
		}
	}
	for name, n := range d.ErrorClasses {
		if n < 0 {
			return fmt.Errorf("errors_by_class.%s is %d: a count is never negative", name, n)
		}
	}
	for _, pt := range d.Series {
		if err := pt.check(d.SeriesTypes); err != nil {
			return err
		}
	}
	if d.Parts != nil {
		if err := d.checkMembers(); err != nil {
			return err
		}
	}
	if d.Part != nil {
		return d.checkPart()
	}
	return nil
}

// checkMembers refuses a merged document whose members do not say, as
// its parts section does, which one took the database's marks.
func (d *Document) checkMembers() error {
	marker := 0
	for _, m := range d.Parts.Members {
		if !m.Part.Marker {
			continue
		}
		if marker != 0 {
			return fmt.Errorf("parts.members: part %d and part %d both claim the database's marks (part.marker)", marker, m.Part.Index)
		}
		marker = m.Part.Index
	}
	if marker != d.Parts.Marker {
		return fmt.Errorf("parts.marker is %d, but the member that took the database's marks is part %d", d.Parts.Marker, marker)
	}
	return nil
}

// check refuses a type's negative figures, and a count other than its
// histogram's total: the driver records every completion in both.
func (tx Tx) check() error {
	for _, f := range []struct {
		name string
		n    int64
	}{{"count", tx.Count}, {"errors", tx.Errors}, {"in_doubt", tx.InDoubt}, {"retries", tx.Retries}, {"aborts", tx.Aborts}} {
		if f.n < 0 {
			return fmt.Errorf("transactions.%s.%s is %d: a count is never negative", tx.Name, f.name, f.n)
		}
	}
	h, err := latency.Decode(tx.Histogram)
	if err != nil {
		return fmt.Errorf("transactions.%s.histogram does not decode: %v", tx.Name, err)
	}
	if total := h.TotalCount(); total != tx.Count {
		return fmt.Errorf("transactions.%s.count is %d, but its histogram holds %d latencies: the driver records every completion in both",
			tx.Name, tx.Count, total)
	}
	return nil
}

// check refuses a second's negative counts.
func (pt Point) check(types []string) error {
	for i, n := range pt.Counts {
		if n < 0 {
			name := fmt.Sprint(i)
			if i < len(types) {
				name = types[i]
			}
			return fmt.Errorf("series at %gs: counts of %s is %d: a count is never negative", pt.T, name, n)
		}
	}
	if pt.Errors < 0 || pt.InDoubt < 0 {
		return fmt.Errorf("series at %gs: errors is %d, in_doubt %d: a count is never negative", pt.T, pt.Errors, pt.InDoubt)
	}
	return nil
}

// checkPart checks a part's section against the run's configuration and
// its own marks.
func (d *Document) checkPart() error {
	p := d.Part
	if p.Index < 1 || p.Index > p.Of {
		return fmt.Errorf("part.index %d of part.of %d is no part of a run", p.Index, p.Of)
	}
	share := func(field, key string, got int, need bool) error {
		if _, ok := d.Config[key]; !ok && !need && got == 0 {
			return nil
		}
		c := workload.ReadConfig(d.Config)
		total := c.Int(key)
		if err := c.Err(); err != nil {
			return fmt.Errorf("part.%s is %d, but the run's %v", field, got, err)
		}
		if want := (driver.Part{Index: p.Index, Of: p.Of}).Share(total); got != want {
			return fmt.Errorf("part.%s is %d, but part %d of %d's share of config.%s %d is %d", field, got, p.Index, p.Of, key, total, want)
		}
		return nil
	}
	if err := share("vus", "vus", p.VUs, true); err != nil {
		return err
	}
	if err := share("connections", "connections", p.Connections, false); err != nil {
		return err
	}
	if p.EndFlushes < 0 {
		return fmt.Errorf("part.end_flushes is %d: a count is never negative", p.EndFlushes)
	}
	if !p.Marker && len(d.Marks) > 0 {
		return fmt.Errorf("marks are the database's, read only by the part that took them, and part.marker is false")
	}
	return nil
}

package catalog

import (
	"fmt"
	"strings"
	"time"

	"github.com/dbrig/dbrig/internal/exitcode"
)

// Query is a filter as a person writes it, on the command line or in a
// URL's query: conditions and times as text, read by Filter.
type Query struct {
	Workload, Target, Host, Kind, Tool string
	Tags, Where                        []string
	Since, Until                       string
	Limit                              int
}

// Filter reads q, its ages counted back from now, or says in one line
// what is wrong with it.
func (q Query) Filter(now time.Time) (Filter, error) {
	f := Filter{Workload: q.Workload, Target: q.Target, Host: q.Host, Kind: q.Kind, Tool: q.Tool, Tags: q.Tags, Limit: q.Limit}
	if q.Limit < 0 {
		return f, exitcode.Userf("--limit %d: want 0 (all) or more", q.Limit)
	}
	for _, w := range q.Where {
		c, err := ParseCond(w)
		if err != nil {
			return f, err
		}
		f.Where = append(f.Where, c)
	}
	var err error
	if f.Since, err = When("--since", q.Since, now); err != nil {
		return f, err
	}
	f.Until, err = When("--until", q.Until, now)
	return f, err
}

// When reads a date, a time or an age back from now; "" is no bound.
func When(flag, s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		var n float64
		if _, err := fmt.Sscanf(days, "%g", &n); err == nil && n >= 0 {
			return now.Add(-time.Duration(n * 24 * float64(time.Hour))), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, exitcode.Userf("%s %q: want a date (2026-11-01), a time (2026-11-01T12:00:00Z) or an age (7d, 12h)", flag, s)
}

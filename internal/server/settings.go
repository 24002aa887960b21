package server

import (
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/dbrig/dbrig/internal/exitcode"
)

// SettingOrder is the names of settings in a start's order (sorted), after
// refusing any that owned says the server's Start sets itself: one that
// changed where the server listens or writes would put it out of reach.
func SettingOrder(settings map[string]string, owned func(name string) bool) ([]string, error) {
	names := make([]string, 0, len(settings))
	for name := range settings {
		if owned(name) {
			return nil, exitcode.Userf("setting %s is managed by dbrig's server and cannot be overridden", name)
		}
		names = append(names, name)
	}
	sort.Strings(names)
	return names, nil
}

// PointNames is every setting name a sweep's points use, sorted, for a
// kind's Preflight to check at once.
func PointNames(points []map[string]string) []string {
	names := map[string]bool{}
	for _, p := range points {
		for name := range p {
			names[name] = true
		}
	}
	return slices.Sorted(maps.Keys(names))
}

// Closest returns the name in known nearest to name by edit distance, if
// it is within a typo's reach (at most 2 edits, fewer for short names);
// "" otherwise.
func Closest(name string, known []string) string {
	best, bestD := "", 3
	if len(name) < 6 {
		bestD = 2
	}
	name = strings.ToLower(name)
	for _, k := range known {
		if d := editDistance(name, strings.ToLower(k)); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// editDistance is Levenshtein's, over bytes: setting names are ASCII.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

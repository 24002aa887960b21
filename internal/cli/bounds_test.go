package cli_test

import (
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestHugeCountsSQLite: a count flag past what the machine or the workload
// can take is one line and exit 2, before anything of it is allocated.
// Before, --vus 99999999999 and --client-cpus 100000 ended in Go's fatal
// errors with goroutine dumps, --warehouses, --schemas and --size in the
// kernel's OOM kill, --loaders in a hang, and --n-searches in a panic.
func TestHugeCountsSQLite(t *testing.T) {
	dir := t.TempDir()
	tprocc := sqliteTPROCC(t)
	dvd := "sqlite:" + filepath.Join(dir, "d.db")
	mustRun(t, "build", "dvd-store", "--target", dvd, "--size", "1MB")
	const huge = "99999999999"
	most := strconv.Itoa(math.MaxInt)
	run := []string{"--rampup", "0s", "--duration", "1s", "--json", filepath.Join(dir, "r.json")}
	fresh := func(name string) string { return "sqlite:" + filepath.Join(dir, name+".db") }
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "tproc-c", "--target", tprocc, "--vus", huge}, "--vus 99999999999: 99,999,999,999 virtual users, with their histograms and sessions, would take about"},
		{[]string{"run", "tproc-c", "--target", tprocc, "--vus", huge, "--connections", "4"}, "--vus 99999999999: 99,999,999,999 terminals would take"},
		{[]string{"run", "tproc-c", "--target", tprocc, "--vus", "4", "--connections", huge}, "--connections 99999999999 is more than --vus 4"},
		{[]string{"run", "tproc-c", "--target", tprocc, "--client-cpus", "100000"}, "--client-cpus must be at most"},
		{[]string{"build", "tproc-c", "--target", fresh("w1"), "--warehouses", huge}, "--warehouses 99999999999 is more than the schema's warehouse ids"},
		{[]string{"build", "tproc-c", "--target", fresh("w2"), "--warehouses", "2000000000"}, "--warehouses 2000000000: 2,000,000,000 warehouses' load jobs would take about"},
		{[]string{"build", "tproc-c", "--target", fresh("l1"), "--loaders", huge}, "--loaders 99999999999: 99,999,999,999 loaders"},
		{[]string{"build", "dvd-store", "--target", fresh("l2"), "--loaders", huge}, "--loaders 99999999999: 99,999,999,999 loaders"},
		{[]string{"build", "block-io", "--target", fresh("l3"), "--loaders", huge}, "--loaders 99999999999: 99,999,999,999 loaders"},
		{[]string{"build", "block-io", "--target", fresh("s"), "--schemas", huge}, "--schemas 99999999999: 99,999,999,999 tables"},
		{[]string{"build", "dvd-store", "--target", fresh("z"), "--size", "100TB"}, "more than the schema's ids, 32-bit integers, can number"},
		{[]string{"run", "dvd-store", "--target", dvd, "--n-searches", most}, "--n-searches and --search-batch must be at most 1073741824"},
		{[]string{"run", "dvd-store", "--target", dvd, "--search-batch", most}, "--n-searches and --search-batch must be at most 1073741824"},
		{[]string{"run", "cpu", "--target", fresh("c"), "--sessions", huge}, "--sessions 99999999999: 99,999,999,999 sessions, with their histograms, would take"},
		{[]string{"run", "cpu", "--target", fresh("c"), "--repeat", huge}, "--repeat 99999999999: 99,999,999,999 repetitions"},
		{[]string{"run", "cpu", "--target", fresh("c"), "--loops", huge}, "--loops must be at most 2147483647"},
	} {
		t.Run(strings.Join(c.args[:2], " ")+" "+c.args[len(c.args)-2], func(t *testing.T) {
			args := c.args
			switch {
			case args[1] == "cpu":
				args = append(append([]string{}, args...), "--json", filepath.Join(dir, "r.json"))
			case args[0] == "run":
				args = append(append([]string{}, args...), run...)
			}
			line := usageError(t, dbrig(t, args...))
			wantIn(t, "the refusal", line, c.want)
		})
	}
}

//go:build unix

package postgres

import (
	"context"
	"strings"
	"testing"
	"time"
)

// hugepagesAIO are the points of experiments/hugepages-aio.yaml: huge
// pages off and on, times the three io_methods of PostgreSQL 18.
func hugepagesAIO() []map[string]string {
	var points []map[string]string
	for _, huge := range []string{"off", "on"} {
		for _, io := range []string{"sync", "worker", "io_uring"} {
			points = append(points, map[string]string{
				"shared_buffers": "2GB", "max_connections": "100", "max_wal_size": "8GB",
				"huge_pages": huge, "io_method": io,
			})
		}
	}
	return points
}

func TestPreflightNamesWhatIsMissingAndWhy(t *testing.T) {
	points := hugepagesAIO()
	pg15 := ServerVersion{Major: 15, Minor: 18}
	pg18 := ServerVersion{Major: 18, Minor: 1}
	noHuge, huge, unknown := 0, 1200, -1
	uring := "'--prefix=/usr' '--with-liburing' '--with-openssl'"
	plain := "'--prefix=/usr' '--without-icu'"
	cases := []struct {
		name      string
		v         ServerVersion
		configure string
		hugePages int
		want      []string // substrings; none means it must pass
	}{
		{"both missing", pg15, uring, noHuge, []string{"io_method needs PostgreSQL 18", "15.18", "huge_pages=on needs huge pages", "vm.nr_hugepages"}},
		{"old server only", pg15, uring, huge, []string{"io_method needs PostgreSQL 18"}},
		{"no huge pages only", pg18, uring, noHuge, []string{"HugePages_Total: 0"}},
		{"no liburing", pg18, plain, huge, []string{"io_method=io_uring needs a PostgreSQL built --with-liburing"}},
		{"all there", pg18, uring, huge, nil},
		{"pg_config and meminfo unreadable", pg18, "", unknown, nil},
	}
	for _, c := range cases {
		err := preflight(points, c.v, "/pg/bin", c.configure, c.hugePages)
		if len(c.want) == 0 {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: passed, want an error", c.name)
			continue
		}
		msg := err.Error()
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: %q lacks %q", c.name, msg, w)
			}
		}
		if strings.Contains(msg, "\n") || strings.Count(msg, "io_method needs") > 1 {
			t.Errorf("%s: want one line naming each problem once: %q", c.name, msg)
		}
	}
}

// TestSettingNames asks the real binaries for their parameters: a typo is
// refused with the name meant, while the developer parameters that
// --describe-config leaves out, extensions' dotted names and names in
// another case pass.
func TestSettingNames(t *testing.T) {
	requireServerBins(t)
	s := New(t.TempDir(), "")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := s.CheckSettingNames(ctx, []string{"max_connections", "shared_bufers"})
	if err == nil || err.Error() != `unknown PostgreSQL setting "shared_bufers" (did you mean shared_buffers?)` {
		t.Errorf("typo: %v", err)
	}
	ok := []string{"Shared_Buffers", "work_mem", "jit_expressions", "force_parallel_mode", "zero_damaged_pages",
		"trace_sort", "ignore_checksum_failure", "wal_consistency_checking", "auto_explain.log_min_duration"}
	if err := s.CheckSettingNames(ctx, ok); err != nil {
		t.Errorf("valid names refused: %v", err)
	}
	// Preflight checks names before anything else.
	points := []map[string]string{{"shared_buffers": "128MB"}, {"maintenance_work_men": "1GB"}}
	if err := s.Preflight(ctx, points); err == nil || !strings.Contains(err.Error(), "did you mean maintenance_work_mem?") {
		t.Errorf("Preflight with a typo: %v", err)
	}
	if err := s.Preflight(ctx, points[:1]); err != nil {
		t.Errorf("Preflight: %v", err)
	}
	if s.Exists() {
		t.Error("checking names created a cluster")
	}
}

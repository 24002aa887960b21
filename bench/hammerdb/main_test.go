//go:build unix

package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestParse: the flags' defaults, and each bad input one message.
func TestParse(t *testing.T) {
	o, msg := parse([]string{"--hammerdb", "/x"}, io.Discard)
	if msg != "" || o.hammerdb != "/x" || o.pairs != 5 || o.duration != time.Minute || o.warmup != time.Minute || o.hammerdbFirst {
		t.Fatalf("defaults: %+v, %q", o, msg)
	}
	o, msg = parse([]string{"--hammerdb", "/x", "--pairs", "1", "--duration", "2m", "--json", "f.json", "--hammerdb-first", "--warmup", "0"}, io.Discard)
	if msg != "" || o.pairs != 1 || o.duration != 2*time.Minute || o.warmup != 0 || o.JSON != "f.json" || !o.hammerdbFirst {
		t.Fatalf("given: %+v, %q", o, msg)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--pairs", "0"}, "--pairs must be at least 1"},
		{[]string{"--duration", "90s"}, "give whole minutes"},
		{[]string{"--duration", "30s"}, "give whole minutes"},
		{[]string{"--warmup", "30s"}, "--warmup 30s: give whole minutes, or 0 for none"},
		{[]string{"--warmup", "-1m"}, "give whole minutes, or 0 for none"},
		{[]string{"extra"}, `unexpected argument "extra"`},
		{[]string{"--socket"}, "HammerDB connects over TCP loopback"},
		{[]string{"--nope"}, "flag provided but not defined"},
	} {
		if _, msg := parse(tc.args, io.Discard); !strings.Contains(msg, tc.want) {
			t.Errorf("%v: %q, want it to say %q", tc.args, msg, tc.want)
		}
	}
}

// TestCheckHammerDB: without --hammerdb, or with a directory that is not
// HammerDB 4.12 set up, the message says how to build it and that nothing
// of HammerDB is copied into dbrig.
func TestCheckHammerDB(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(t.TempDir(), "hammerdbcli")
	if err := os.WriteFile(old, []byte("set hdb_version \"v4.11\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	unedited := filepath.Join(t.TempDir(), "hammerdbcli")
	if err := os.WriteFile(unedited, []byte("exec ./bin/tclsh8.6 \"$0\"\nset hdb_version \"v4.12\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ dir, want string }{
		{"", "HammerDB 4.12 not given"},
		{dir, "no HammerDB in " + dir},
		{filepath.Dir(old), "is not HammerDB 4.12"},
		{filepath.Dir(unedited), "still runs its bundled ./bin/tclsh8.6"},
	} {
		msg := checkHammerDB(tc.dir)
		for _, want := range []string{tc.want, harnessDoc, "nothing of HammerDB is copied into dbrig"} {
			if !strings.Contains(msg, want) {
				t.Errorf("%q: %q, want it to say %q", tc.dir, msg, want)
			}
		}
		if strings.Contains(msg, "\n") {
			t.Errorf("%q: %q is more than one line", tc.dir, msg)
		}
	}
}

// TestScripts: the driving scripts run the mode, size and shape measured,
// and HammerDB counts whole minutes.
func TestScripts(t *testing.T) {
	build := buildScript(5432, "pw")
	for _, want := range []string{"diset connection pg_port 5432\n", "diset tpcc pg_count_ware 4\n",
		"diset tpcc pg_storedprocs false\n", "buildschema\n"} {
		if !strings.Contains(build, want) {
			t.Errorf("build script lacks %q", want)
		}
	}
	run := runScript(5432, 2*time.Minute)
	for _, want := range []string{"diset tpcc pg_rampup 1\n", "diset tpcc pg_duration 2\n", "diset tpcc pg_storedprocs false\n",
		"vuset vu 4\n", "vuset logtotemp 1\n", "vurun\n"} {
		if !strings.Contains(run, want) {
			t.Errorf("run script lacks %q", want)
		}
	}
	if strings.Contains(run, "superuserpass") {
		t.Error("the run script carries the superuser's password")
	}
}

// TestResultLine: HammerDB's result line, in both of its orders.
func TestResultLine(t *testing.T) {
	for line, want := range map[string]string{
		"Vuser 1:TEST RESULT : System achieved 22644 NOPM from 52092 PostgreSQL TPM": "22644",
		"Vuser 1:TEST RESULT : System achieved 52092 PostgreSQL TPM at 22644 NOPM":   "22644",
	} {
		m := resultNOPM.FindStringSubmatch(line)
		if m == nil || m[1]+m[2] != want {
			t.Errorf("%q: %q, want %s", line, m, want)
		}
	}
}

// TestWindow: the window is between the samples where HammerDB's lines
// were first seen, else by the clock from the first sample.
func TestWindow(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	s := &sampler{start: -1, end: -1}
	for i := range 200 {
		s.samples = append(s.samples, sample{at: t0.Add(time.Duration(i) * time.Second), next: int64(i)})
	}
	from, to, how := s.window(time.Minute, time.Minute)
	if how != "clock" || from.next != 60 || to.next != 120 {
		t.Errorf("by the clock: %v to %v (%s), want samples 60 to 120", from, to, how)
	}
	s.start, s.end = 62, 123
	if from, to, how = s.window(time.Minute, time.Minute); how != "log" || from.next != 62 || to.next != 123 {
		t.Errorf("from the log: %v to %v (%s), want samples 62 to 123", from, to, how)
	}
	s.start, s.end = 62, -1
	if _, to, how = s.window(time.Minute, 3*time.Minute); how != "clock" || to != nil {
		t.Errorf("no end line, window past the samples: %v (%s), want none", to, how)
	}
}

// TestInterval: the bootstrap interval of a median holds the median,
// lies within the values, is one point where they are all one, and is
// the same for the same values.
func TestInterval(t *testing.T) {
	if got := interval([]float64{1.2, 1.2, 1.2}); got != [2]float64{1.2, 1.2} {
		t.Errorf("all 1.2: %v", got)
	}
	v := []float64{1.10, 1.25, 1.18, 1.30, 1.21}
	got := interval(v)
	if got[0] < 1.10 || got[1] > 1.30 || got[0] > median(v) || got[1] < median(v) || got[0] == got[1] {
		t.Errorf("%v: interval %v, want it around the median %.2f, within 1.10-1.30", v, got, median(v))
	}
	if again := interval(v); again != got {
		t.Errorf("the same pairs gave %v, then %v", got, again)
	}
}

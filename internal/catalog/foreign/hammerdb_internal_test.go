package foreign

import (
	"reflect"
	"testing"
	"time"
)

func TestTclList(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		bad  bool
	}{
		{in: "", want: nil},
		{in: "a b  c", want: []string{"a", "b", "c"}},
		{in: "connection {pg_host 127.0.0.1 pg_port 5432} tpcc {}", want: []string{"connection", "pg_host 127.0.0.1 pg_port 5432", "tpcc", ""}},
		{in: "k {a {b c} d}", want: []string{"k", "a {b c} d"}},
		{in: `k "two words" l a\ b`, want: []string{"k", "two words", "l", "a b"}},
		{in: `k {a\}b}`, want: []string{"k", `a\}b`}},
		{in: "k {a b", bad: true},
		{in: `k "a b`, bad: true},
		{in: "{a}b", bad: true},
	} {
		got, err := tclList(tc.in)
		if (err != nil) != tc.bad || !tc.bad && !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: %q, %v; want %q (an error: %v)", tc.in, got, err, tc.want, tc.bad)
		}
	}
}

func TestParseJobDict(t *testing.T) {
	got := parseJobDict("connection {pg_host h pg_port 5} tpcc {pg_user u pg_pass secret1 pg_superuserpass secret2 pg_count_ware 4} odd {a b c}")
	want := map[string]any{
		"connection": map[string]string{"pg_host": "h", "pg_port": "5"},
		"tpcc":       map[string]string{"pg_user": "u", "pg_count_ware": "4"},
		"odd":        "a b c",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%v, want %v", got, want)
	}
	if parseJobDict("a {b") != nil || parseJobDict("a") != nil {
		t.Error("a dictionary of no dictionary")
	}
}

// TestReadResult: the result lines of HammerDB's formats, a failed user,
// and a run that printed none.
func TestReadResult(t *testing.T) {
	line := func(vu int64, s string) hdbLine { return hdbLine{VU: vu, Text: s} }
	for _, tc := range []struct {
		name   string
		out    []hdbLine
		status string
		nopm   float64
		tpm    float64
	}{
		{"new", []hdbLine{line(1, "TEST RESULT : System achieved 7455 NOPM from 17037 PostgreSQL TPM")}, statusComplete, 7455, 17037},
		{"old", []hdbLine{line(1, "TEST RESULT : System achieved 17037 SQL Server TPM at 7455 NOPM")}, statusComplete, 7455, 17037},
		{"failed", []hdbLine{line(0, "Vuser 2:FINISHED FAILED"), line(1, "TEST RESULT : System achieved 1 NOPM from 2 PostgreSQL TPM")}, statusFailed, 1, 2},
		{"none", []hdbLine{line(0, "Vuser 1:RUNNING"), line(1, "Timing test period of 1 in minutes")}, statusNone, 0, 0},
	} {
		r := readResult(hdbJob{Output: tc.out})
		if r.Status != tc.status || tc.nopm != 0 && (r.NOPM == nil || *r.NOPM != tc.nopm || *r.TPM != tc.tpm) || tc.nopm == 0 && r.NOPM != nil {
			t.Errorf("%s: %+v", tc.name, r)
		}
	}
	h := readResult(hdbJob{Output: []hdbLine{
		line(0, "Vuser 1:RUNNING"), line(0, "Vuser 2:RUNNING"),
		line(1, "Geometric mean of query times returning rows (22) is \"2.50000\""),
		line(2, "Geometric mean of query times returning rows (22) is \"3.00000\""),
		line(1, "Completed 1 query set(s) in 90 seconds"), line(2, "Completed 1 query set(s) in 95 seconds"),
	}})
	if h.Status != statusComplete || *h.Geomean != 2.5 || *h.QuerySets != 2 || *h.QuerySetSeconds != 95 || *h.ActiveVUs != 2 {
		t.Errorf("TPROC-H: %+v", h)
	}
}

// TestJobStart: the jobid's time where it agrees with the local
// timestamp's, the timestamp read as UTC where not.
func TestJobStart(t *testing.T) {
	utc := time.Date(2026, 12, 2, 11, 17, 22, 0, time.UTC)
	for _, tc := range []struct {
		id, ts string
		want   time.Time
	}{
		{"6B0FFE42661A03E213630353", "2026-12-02 11:17:22", utc},
		{"6B0FFE42661A03E213630353", "2026-12-02 20:17:22", utc}, // a zone 9 hours east
		{"ZZZZZZZZ", "2026-12-02 11:17:22", utc},
		{"00000001AAAA", "2026-12-02 11:17:22", utc},
		{"6B0FFE42661A03E213630353", "", utc},
		{"x", "", time.Time{}},
	} {
		if got := jobStart(hdbJob{ID: tc.id, Timestamp: tc.ts}); !got.Equal(tc.want) {
			t.Errorf("%s %q: %v, want %v", tc.id, tc.ts, got, tc.want)
		}
	}
}

func TestFinished(t *testing.T) {
	if finished([]hdbLine{{VU: 0, Text: "Vuser 1:RUNNING"}, {VU: 1, Text: "ALL VIRTUAL USERS COMPLETE"}}) {
		t.Error("a job whose users run still is finished")
	}
	if !finished([]hdbLine{{VU: 0, Text: "ALL VIRTUAL USERS COMPLETE"}}) || !finished([]hdbLine{{VU: 0, Text: "Vuser 2:FINISHED FAILED"}}) {
		t.Error("a job whose users ended is not finished")
	}
}

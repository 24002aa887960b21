package parts

import (
	"strings"
	"testing"
)

// TestCanonical: the same configuration hashes the same however it was
// built (key order, typed numbers, a struct for a map); any change to a
// value, however deep, changes the hash.
func TestCanonical(t *testing.T) {
	type cRun struct {
		CLast int `json:"c_last"`
		CID   int `json:"c_id"`
	}
	a := map[string]any{"vus": 6, "duration": "20s", "c_run": map[string]any{"c_last": 42, "c_id": 7}, "seed": uint64(1<<63 + 5)}
	b := map[string]any{"seed": uint64(1<<63 + 5), "c_run": cRun{CLast: 42, CID: 7}, "duration": "20s", "vus": int64(6)}
	ca, ha := Canonical(a)
	cb, hb := Canonical(b)
	if string(ca) != string(cb) || ha != hb {
		t.Errorf("the same configuration twice:\n%s %s\n%s %s", ca, ha, cb, hb)
	}
	if want := `{"c_run":{"c_id":7,"c_last":42},"duration":"20s","seed":9223372036854775813,"vus":6}`; string(ca) != want {
		t.Errorf("canonical\n%s\nwant\n%s", ca, want)
	}
	if len(ha) != 64 {
		t.Errorf("hash %q: want 64 hex digits", ha)
	}
	a["c_run"].(map[string]any)["c_last"] = 43
	if _, h := Canonical(a); h == ha {
		t.Error("a nested value changed, the hash did not")
	}
}

// TestMismatch: the keys that differ, flattened, named with both sides'
// values in one line; a key only one side has is "none" on the other.
func TestMismatch(t *testing.T) {
	leader, _ := Canonical(map[string]any{"duration": "20s", "vus": 6, "c_run": map[string]any{"c_last": 42}, "keying": true})
	for _, c := range []struct {
		cfg  map[string]any
		want string
	}{
		{map[string]any{"duration": "10s", "vus": 6, "c_run": map[string]any{"c_last": 42}, "keying": true},
			"part 2's duration 10s differs from part 1's 20s: every part must run the same flags and workload settings"},
		{map[string]any{"duration": "20s", "vus": 6, "c_run": map[string]any{"c_last": 17}, "mode": "sql"},
			"part 2's c_run.c_last 17, keying none, mode sql differ from part 1's c_run.c_last 42, keying true, mode none: every part"},
		{map[string]any{"duration": "20s", "vus": 6, "c_run": map[string]any{"c_last": 42}, "keying": true, "where": "a b"},
			`part 2's where "a b" differs from part 1's none`},
	} {
		ours, _ := Canonical(c.cfg)
		keys, o, th, err := differs(ours, leader)
		if err != nil {
			t.Fatal(err)
		}
		got := mismatch(2, 1, keys, o, th)
		if !strings.HasPrefix(got, c.want) || strings.Contains(got, "\n") {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
	}
}

package dbtarget

import "testing"

func TestParseIsolation(t *testing.T) {
	for in, want := range map[string]Isolation{
		"": "", "read-committed": ReadCommitted, " Repeatable-Read": RepeatableRead, "SERIALIZABLE": Serializable,
	} {
		got, err := ParseIsolation(in)
		if err != nil || got != want {
			t.Errorf("ParseIsolation(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"read-uncommitted", "snapshot", "read committed"} {
		if _, err := ParseIsolation(in); err == nil {
			t.Errorf("ParseIsolation(%q) took it", in)
		}
	}
	if got := RepeatableRead.SQL(); got != "REPEATABLE READ" {
		t.Errorf("SQL() = %q", got)
	}
}

package dbtarget

import "testing"

func TestRegisterTwicePanics(t *testing.T) {
	saved := openers
	defer func() { openers = saved }()
	openers = nil
	Register(Opener{Kind: "a", Prefixes: []string{"a:"}})
	for _, o := range []Opener{{Kind: "a"}, {Kind: "b", Prefixes: []string{"b:", "a:"}}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("registering %+v after kind a with prefix a: did not panic", o)
				}
			}()
			Register(o)
		}()
	}
	if len(openers) != 1 {
		t.Errorf("%d openers registered, want 1", len(openers))
	}
}

// TestLookupPrecedence: prefixes before any Match, the longest prefix
// first, and Match functions in the order of the kinds' names, whatever
// the order of registration.
func TestLookupPrecedence(t *testing.T) {
	saved := openers
	defer func() { openers = saved }()
	openers = nil
	greedy := func(string) bool { return true }
	Register(Opener{Kind: "z-any", Match: greedy})
	Register(Opener{Kind: "short", Prefixes: []string{"db:"}})
	Register(Opener{Kind: "long", Prefixes: []string{"db://"}, Match: func(u string) bool { return u == "kv" }})
	Register(Opener{Kind: "m-any", Match: greedy, Redact: func(string) string { return "redacted by m-any" }})
	for _, c := range []struct{ url, kind string }{
		{"db://host", "long"},
		{"db:/path", "short"},
		{"kv", "long"},
		{"anything", "m-any"},
	} {
		if o, ok := lookup(c.url); !ok || o.Kind != c.kind {
			t.Errorf("lookup(%q) = %q, %v; want %q", c.url, o.Kind, ok, c.kind)
		}
	}
	if got := Redact("anything"); got != "redacted by m-any" {
		t.Errorf("Redact went to the wrong kind: %q", got)
	}
	if got := Redact("db://u:pw@host"); got != "db://u:xxxxx@host" {
		t.Errorf("a kind without Redact: %q, want RedactAny's", got)
	}
}

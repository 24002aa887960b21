package target

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

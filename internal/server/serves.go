package server

import (
	"fmt"
	"strings"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/exitcode"
)

// kindIn names the kind of the server dbrig manages in dir: the one its
// state file records, or the default kind for a directory from before
// kinds were recorded.
func kindIn(dir string) string {
	if rec, err := ReadState(dir); err == nil && rec.Kind != "" {
		return rec.Kind
	}
	return Default()
}

// Serves refuses, in one line, a target url that is not on the running
// server st of dir: a database of another kind, or one whose URL names
// another endpoint than the server's own URLs do. Each kind's targets
// read their URLs themselves (dbtarget.EndpointOf), so nothing here knows
// a kind's URL form.
func Serves(dir string, st Status, url string) error {
	k, err := Lookup(kindIn(dir))
	if err != nil {
		return err
	}
	kind, at, located, err := dbtarget.EndpointOf(url)
	if err != nil {
		return err
	}
	what := fmt.Sprintf("the %s server in %s", k.Name, dir)
	if kind != k.Target || !located {
		if kind == "" {
			kind = "unknown"
		}
		return exitcode.Userf("the target %s is a %s database, not one on %s: give the URL of a database on it (dbrig server status --dir %s)", dbtarget.Redact(url), kind, what, dir)
	}
	var listens []string
	for _, u := range append([]string{st.URL, st.Socket}, st.Nodes...) {
		if _, e, ok, _ := dbtarget.EndpointOf(u); ok {
			if e == at {
				return nil
			}
			listens = append(listens, e.String())
		}
	}
	return exitcode.Userf("the target %s is at %s, not on %s, which listens at %s: give the URL of a database on it (dbrig server status --dir %s)",
		dbtarget.Redact(url), at, what, strings.Join(listens, " and "), dir)
}

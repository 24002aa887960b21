package catalog

import (
	"database/sql"
	"slices"
	"strings"
)

// Backend is a database a catalogue can live in. Each registers itself
// from a package of its own, as the targets do, so that this one names
// none: the SQL below is what every backend reads alike, with $N
// placeholders that Rebind turns into the driver's.
type Backend struct {
	// Prefixes are the URL forms it takes ("sqlite:").
	Prefixes []string
	// Open opens the database url names (creating a file where that is
	// how the backend keeps one), without connecting yet.
	Open func(url string) (*sql.DB, error)
	// Blob is the type of a column of bytes.
	Blob string
	// Rebind turns the $N placeholders into the driver's; nil keeps them.
	Rebind func(q string) string
	// Redact hides a password in url for a message.
	Redact func(url string) string
}

var backends []Backend

// Register adds a backend; a prefix registered twice panics.
func Register(b Backend) {
	for _, o := range backends {
		for _, p := range b.Prefixes {
			if slices.Contains(o.Prefixes, p) {
				panic("catalog: backend prefix " + p + " registered twice")
			}
		}
	}
	backends = append(backends, b)
}

// lookup is the backend whose prefix starts url.
func lookup(url string) (Backend, bool) {
	for _, b := range backends {
		for _, p := range b.Prefixes {
			if strings.HasPrefix(url, p) {
				return b, true
			}
		}
	}
	return Backend{}, false
}

// prefixes lists every backend's URL forms, for a refusal.
func prefixes() []string {
	var all []string
	for _, b := range backends {
		all = append(all, b.Prefixes...)
	}
	slices.Sort(all)
	return all
}

// Package sqlite keeps a catalogue in an SQLite file: the default, beside
// the embedded target's database, with nothing to set up.
package sqlite

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/dbrig/dbrig/internal/catalog"
)

func init() {
	catalog.Register(catalog.Backend{
		Prefixes: []string{"sqlite:"},
		Open:     open,
		Blob:     "BLOB",
		Rebind:   rebind,
	})
}

// open opens the file the URL names, making its directory: WAL, so that
// dbrig serve reads while runs record, and a busy wait, since two dbrigs
// may record at once. Durability stays SQLite's default (FULL): the
// document's own file is the source of truth, and a catalogue that lost
// its last entry on a power cut would say nothing of it.
func open(url string) (*sql.DB, error) {
	path := strings.TrimPrefix(strings.TrimPrefix(url, "sqlite:"), "//")
	if path == "" {
		return nil, fmt.Errorf("name a file: sqlite:PATH")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	return sql.Open(driver, "file:"+path+"?"+pragmas)
}

// numbered is a $N placeholder, which SQLite would read as a named one,
// bound in the order the names first appear; ?N binds the Nth argument.
var numbered = regexp.MustCompile(`\$([0-9]+)`)

func rebind(q string) string { return numbered.ReplaceAllString(q, "?$1") }

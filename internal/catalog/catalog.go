// Package catalog keeps every result document dbrig writes or is given,
// indexed so that months of runs can be listed, filtered, charted over
// time and tested for regressions. The document stays the source of
// truth: the catalogue holds a copy of its bytes, identified by their
// hash, and the figures it is found by (workload, target, host, config,
// headline metrics with their intervals, verdict, tags, commit), which it
// can always make again from the copy.
package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/human"
)

// DefaultURL is the catalogue beside the embedded default target's
// database, and EnvURL the variable that names another.
const (
	DefaultURL = "sqlite:dbrig-data/catalog.db"
	EnvURL     = "DBRIG_CATALOG"
)

// Catalog is an open catalogue.
type Catalog struct {
	db  *sql.DB
	b   Backend
	url string
}

// Open opens the catalogue at url, making it, or bringing its schema up
// to date, where it needs to be.
func Open(ctx context.Context, url string) (*Catalog, error) {
	b, ok := lookup(url)
	if !ok {
		return nil, exitcode.Userf("--catalog %s: not a catalogue URL; give one of %s", dbtarget.RedactAny(url), strings.Join(prefixes(), ", "))
	}
	c := &Catalog{b: b, url: url}
	db, err := b.Open(url)
	if err != nil {
		return nil, c.fail("cannot open it", err)
	}
	c.db = db
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, c.fail("cannot reach it", err)
	}
	if err := c.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return c, nil
}

// Close closes the catalogue.
func (c *Catalog) Close() error { return c.db.Close() }

// Name is the catalogue's URL without its password.
func (c *Catalog) Name() string {
	if c.b.Redact != nil {
		return c.b.Redact(c.url)
	}
	return c.url
}

// q is the query s in the backend's placeholders.
func (c *Catalog) q(s string) string {
	if c.b.Rebind != nil {
		return c.b.Rebind(s)
	}
	return s
}

// fail says what could not be done to the catalogue, in one line a user
// can act on (exit 2): a catalogue out of reach is theirs to fix. A
// password in the driver's message is hidden.
func (c *Catalog) fail(what string, err error) error {
	msg := human.OneLine(err)
	if c.b.Redact != nil {
		msg = c.b.Redact(msg)
	}
	return storeError{exitcode.Userf("the catalogue %s: %s: %s", c.Name(), what, msg)}
}

// ErrStore is what every failure of the catalogue itself (not of a
// document given it) is, so that an import stops at the first one and
// goes past a bad file.
var ErrStore = errors.New("the catalogue failed")

type storeError struct{ err error }

func (e storeError) Error() string   { return e.err.Error() }
func (e storeError) Unwrap() []error { return []error{e.err, ErrStore} }

// ErrNotFound is a run ID no entry has.
type ErrNotFound struct{ ID string }

func (e ErrNotFound) Error() string {
	return fmt.Sprintf("no run %s in the catalogue (dbrig runs lists them)", e.ID)
}

// Unwrap makes it a user's error, exit 2.
func (e ErrNotFound) Unwrap() error { return exitcode.Userf("%s", e.Error()) }

// Package postgres keeps a catalogue in a PostgreSQL database, for a team
// that shares one: postgres://USER@HOST/DB, its password from the URL,
// $PGPASSWORD or a passfile as libpq reads them.
package postgres

import (
	"database/sql"

	"github.com/dbrig/dbrig/internal/catalog"
	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

func init() {
	catalog.Register(catalog.Backend{
		Prefixes: []string{"postgres://", "postgresql://"},
		Open:     open,
		Blob:     "BYTEA",
		Redact:   dbtarget.RedactAny,
	})
}

func open(url string) (*sql.DB, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	cfg.RuntimeParams["application_name"] = "dbrig catalog"
	return stdlib.OpenDB(*cfg), nil
}

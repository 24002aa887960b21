package postgres

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/human"
	"github.com/jackc/pgx/v5/pgconn"
)

// Endpoint is where the server url names listens, as libpq reads it (PG*
// variables fill what url leaves out): a host, or the directory of a
// unix socket named after the port.
func Endpoint(url string) (dbtarget.Endpoint, error) {
	cfg, err := pgconn.ParseConfig(url)
	if err != nil {
		return dbtarget.Endpoint{}, badURL(url, err)
	}
	if strings.HasPrefix(cfg.Host, "/") {
		return dbtarget.Unix(filepath.Join(cfg.Host, fmt.Sprintf(".s.PGSQL.%d", cfg.Port))), nil
	}
	return dbtarget.TCP(cfg.Host, int(cfg.Port)), nil
}

// badURL is the one line about a url that cannot be read, its password
// scrubbed.
func badURL(url string, err error) error {
	if strings.Contains(err.Error(), "invalid default_query_exec_mode") {
		return exitcode.Userf("target %s: default_query_exec_mode must be one of %s "+
			"(exec or cache_describe through a pooler in transaction mode)", Redact(url), execModes)
	}
	return exitcode.Userf("target %s: %s", Redact(url), dbtarget.Scrub(human.OneLine(err), secretOf(url)))
}

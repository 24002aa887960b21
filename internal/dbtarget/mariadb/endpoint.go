package mariadb

import (
	"net"
	"strconv"

	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/human"

	"github.com/dbrig/dbrig/internal/dbtarget"
)

// Endpoint is where the server url names listens: its host and port, or
// its ?socket=.
func Endpoint(url string) (dbtarget.Endpoint, error) {
	cfg, _, err := config(url)
	if err != nil {
		return dbtarget.Endpoint{}, badURL(url, err)
	}
	if cfg.Net == "unix" {
		return dbtarget.Unix(cfg.Addr), nil
	}
	host, port, err := net.SplitHostPort(cfg.Addr)
	n, perr := strconv.Atoi(port)
	if err != nil || perr != nil {
		return dbtarget.Endpoint{}, exitcode.Userf("target %s: not a host:port", Redact(url))
	}
	return dbtarget.TCP(host, n), nil
}

// badURL is the one line about a url that cannot be read, its password
// scrubbed.
func badURL(url string, err error) error {
	return exitcode.Userf("target %s: %s", Redact(url), dbtarget.Scrub(human.OneLine(err), secretOf(url)))
}

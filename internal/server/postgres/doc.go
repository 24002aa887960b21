// Package postgres is the PostgreSQL server dbrig manages itself (kind
// "postgres"): initdb and pg_ctl, running as an unprivileged user when
// dbrig is root, the server's log and state, and the preflight checks of a
// sweep's settings. It needs a unix host: on others the package is empty
// and the kind is not registered, so a managed target says it needs one.
package postgres

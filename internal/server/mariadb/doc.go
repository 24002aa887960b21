// Package mariadb is the MariaDB server dbrig manages itself (kind
// "mariadb"): created with mariadb-install-db, started as mariadbd with
// settings of its own per start, stopped with SIGTERM (a clean shutdown).
// The target that speaks to it is internal/dbtarget/mariadb. It needs a unix
// host: on others the package is empty and the kind is not registered, so
// a managed target says it needs one.
package mariadb

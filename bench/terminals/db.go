//go:build unix

package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/dbrig/dbrig/bench/internal/harness"
	"github.com/dbrig/dbrig/internal/server/postgres"
	"github.com/jackc/pgx/v5"
)

// bench is what every point runs with.
type bench struct {
	o      options
	dbrig  string
	dir    string
	srv    *postgres.Server
	urlFor func(db string) string
	// built are the databases ready this run, by warehouses.
	built map[int]bool
}

// marker is the comment a finished build leaves on its database, which a
// later run with --reuse looks for: a database without it is a build
// that did not finish, and is built again.
func marker(warehouses int) string {
	return fmt.Sprintf("bench/terminals: tproc-c, %d warehouses", warehouses)
}

// dbName is the database of tproc-c with the given warehouses.
func dbName(warehouses int) string { return "w" + strconv.Itoa(warehouses) }

// database returns the URL of a database of tproc-c with the given
// warehouses, built unless a finished build is there already.
func (b *bench) database(ctx context.Context, warehouses int) (string, error) {
	name := dbName(warehouses)
	url := b.urlFor(name)
	if b.built[warehouses] {
		return url, nil
	}
	comment, err := dbComment(ctx, b.urlFor("postgres"), name)
	if err != nil {
		return "", err
	}
	if comment == marker(warehouses) {
		fmt.Printf("\nReusing database %s: %d warehouses, built earlier in %s\n", name, warehouses, b.dir)
	} else if err := b.build(ctx, name, warehouses); err != nil {
		return "", err
	}
	if b.built == nil {
		b.built = map[int]bool{}
	}
	b.built[warehouses] = true
	return url, nil
}

// build makes database name afresh and builds tproc-c there, then marks
// it finished.
func (b *bench) build(ctx context.Context, name string, warehouses int) error {
	if err := b.srv.DropDB(ctx, name); err != nil {
		return err
	}
	if err := b.srv.CreateDB(ctx, name); err != nil {
		return err
	}
	fmt.Printf("\n== Build: %d warehouses, %d loaders, into database %s\n", warehouses, b.o.loaders, name)
	wall, _, err := harness.Timed(ctx, harness.Command(ctx, b.dbrig, "build", "tproc-c", "--target", b.urlFor(name),
		"--warehouses", strconv.Itoa(warehouses), "--loaders", strconv.Itoa(b.o.loaders)))
	if err != nil {
		return err
	}
	fmt.Printf("Build: %.1f s wall clock\n", wall.Seconds())
	conn, err := pgx.Connect(ctx, b.urlFor("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	_, err = conn.Exec(ctx, fmt.Sprintf("COMMENT ON DATABASE %s IS '%s'", name, marker(warehouses)))
	return err
}

// dbComment is database name's comment, "" when it has none or does not
// exist.
func dbComment(ctx context.Context, adminURL, name string) (string, error) {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return "", err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var comment *string
	err = conn.QueryRow(ctx, "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = $1", name).Scan(&comment)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return "", nil
	case err != nil:
		return "", err
	case comment == nil:
		return "", nil
	}
	return *comment, nil
}

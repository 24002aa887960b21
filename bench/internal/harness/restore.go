//go:build unix

package harness

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Kept is a built database and the copy of it that each run starts
// from again, so that no run pays for the rows the runs before it added
// (a faster side's later runs would pay more).
type Kept struct {
	// admin is the maintenance database's URL, as the cluster's superuser.
	admin               string
	DB, Template, Owner string
}

// Keep copies database db, on the cluster whose maintenance database is
// at admin, to db_built, and notes db's owner, whom each copy keeps.
func Keep(ctx context.Context, admin, db string) (*Kept, error) {
	k := &Kept{admin: admin, DB: db, Template: db + "_built"}
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if err := conn.QueryRow(ctx, "SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = $1", db).Scan(&k.Owner); err != nil {
		return nil, fmt.Errorf("the owner of %s: %w", db, err)
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+ident(k.Template)+" TEMPLATE "+ident(db)+" STRATEGY FILE_COPY"); err != nil {
		return nil, fmt.Errorf("copy %s to %s: %w", db, k.Template, err)
	}
	return k, nil
}

// Restore makes the database again from its copy: a file copy (STRATEGY
// FILE_COPY, which checkpoints first), not rows written through the log.
// It prints how long that took, under label.
func (k *Kept) Restore(ctx context.Context, label string) error {
	began := time.Now()
	conn, err := pgx.Connect(ctx, k.admin)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	for _, stmt := range []string{"DROP DATABASE " + ident(k.DB) + " WITH (FORCE)",
		"CREATE DATABASE " + ident(k.DB) + " TEMPLATE " + ident(k.Template) + " STRATEGY FILE_COPY OWNER " + ident(k.Owner)} {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("restore %s from %s: %w", k.DB, k.Template, err)
		}
	}
	fmt.Printf("%s: database %s restored from %s in %.1f s\n", label, k.DB, k.Template, time.Since(began).Seconds())
	return nil
}

func ident(name string) string { return pgx.Identifier{name}.Sanitize() }

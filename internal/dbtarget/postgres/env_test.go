//go:build unix

package postgres

import (
	"context"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/server/postgres/pgtest"
	"github.com/dbrig/dbrig/internal/server/servertest"
)

// TestPasswordFromEnvironment: a URL with neither a password nor a
// passfile takes $PGPASSWORD, so no password need be on a command line;
// a wrong one is refused, and the refusal does not show it.
func TestPasswordFromEnvironment(t *testing.T) {
	u, pw := servertest.SplitPassfile(t, pgtest.NewDB(t))
	// An empty passfile keeps ~/.pgpass out of the test.
	bare := u + "&passfile=" + url.QueryEscape(os.DevNull)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	t.Setenv("PGPASSWORD", pw)
	tg, err := Open(ctx, bare)
	if err != nil {
		t.Fatalf("open %s with $PGPASSWORD: %v", bare, err)
	}
	tg.Close()

	t.Setenv("PGPASSWORD", "wrong-"+pw)
	if tg, err := Open(ctx, bare); err == nil {
		tg.Close()
		t.Fatalf("open %s with a wrong $PGPASSWORD succeeded", bare)
	} else if strings.Contains(err.Error(), pw) {
		t.Errorf("the refusal shows the password: %v", err)
	}
}

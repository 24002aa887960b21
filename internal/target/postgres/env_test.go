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
)

// TestPasswordFromEnvironment: a URL with neither a password nor a
// passfile takes $PGPASSWORD, so no password need be on a command line;
// a wrong one is refused, and the refusal does not show it.
func TestPasswordFromEnvironment(t *testing.T) {
	u, err := url.Parse(pgtest.NewDB(t))
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	b, err := os.ReadFile(q.Get("passfile"))
	if err != nil {
		t.Fatal(err)
	}
	line := strings.TrimSpace(string(b))
	pw := line[strings.LastIndex(line, ":")+1:]
	// An empty passfile keeps ~/.pgpass out of the test.
	q.Set("passfile", os.DevNull)
	u.RawQuery = q.Encode()
	bare := u.String()
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

package mariadb_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/dbtarget/mariadb"
	"github.com/dbrig/dbrig/internal/server/mariadb/mariatest"
	"github.com/dbrig/dbrig/internal/server/servertest"
)

// TestPasswordFromEnvironment: the managed server's URL works through the
// passfile it names; without one, the password comes from $MYSQL_PWD, and
// a wrong one is refused without showing it.
func TestPasswordFromEnvironment(t *testing.T) {
	withFile := mariatest.NewDB(t)
	bare, pw := servertest.SplitPassfile(t, withFile)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	open := func(u string) error {
		tg, err := dbtarget.OpenExisting(ctx, u)
		if err == nil {
			tg.Close()
		}
		return err
	}

	t.Setenv(mariadb.PasswordEnv, "")
	if err := open(withFile); err != nil {
		t.Fatalf("open through the passfile: %v", err)
	}
	if err := open(bare); err == nil {
		t.Fatal("opened without a password")
	}
	t.Setenv(mariadb.PasswordEnv, pw)
	if err := open(bare); err != nil {
		t.Fatalf("open %s with $%s: %v", bare, mariadb.PasswordEnv, err)
	}
	t.Setenv(mariadb.PasswordEnv, "wrong-"+pw)
	if err := open(bare); err == nil {
		t.Fatalf("open %s with a wrong $%s succeeded", bare, mariadb.PasswordEnv)
	} else if strings.Contains(err.Error(), pw) {
		t.Errorf("the refusal shows the password: %v", err)
	}
}

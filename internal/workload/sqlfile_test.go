package workload

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/exitcode"
)

// sqlTree has each block say which file it came from.
var sqlTree = fstest.MapFS{
	"sql/generic/tx.sql":   {Data: []byte("-- name: a\ngeneric a\n-- name: b\ngeneric b\n-- name: c\n-- why c\ngeneric c\n")},
	"sql/mysql/tx.sql":     {Data: []byte("-- name: b\nmysql b\n-- name: d\nmysql d\n")},
	"sql/mariadb/tx.sql":   {Data: []byte("-- name: c\nmariadb c\n-- name: e\nmariadb e\n")},
	"sql/postgres/tx.sql":  {Data: []byte("-- name: a\npostgres a\n")},
	"sql/generic/only.sql": {Data: []byte("-- name: x\ngeneric x\n")},
	"sql/lone/lone.sql":    {Data: []byte("-- name: y\nlone y\n")},
	"sql/mysql/dup.sql":    {Data: []byte("-- name: y\none\n-- name: y\ntwo\n")},
	"sql/mysql/loose.sql":  {Data: []byte("-- why\nlost\n-- name: y\none\n")},
	"sql/mysql/blank.sql":  {Data: []byte("-- name: y\none\n-- name:\nlost\n")},
}

func TestLoadSQL(t *testing.T) {
	mariadb := dbtarget.Dialect{Name: "mariadb", Base: "mysql"}
	cases := []struct {
		d    dbtarget.Dialect
		file string
		want SQLFile
	}{
		// Generic, then the base, then the dialect, block by block.
		{mariadb, "tx.sql", SQLFile{"a": "generic a", "b": "mysql b", "c": "mariadb c", "d": "mysql d", "e": "mariadb e"}},
		{dbtarget.Dialect{Name: "mysql"}, "tx.sql", SQLFile{"a": "generic a", "b": "mysql b", "c": "generic c", "d": "mysql d"}},
		{dbtarget.Dialect{Name: "postgres"}, "tx.sql", SQLFile{"a": "postgres a", "b": "generic b", "c": "generic c"}},
		// A dialect without a file of its own gets its base's and the generic one.
		{dbtarget.Dialect{Name: "tidb", Base: "mysql"}, "tx.sql", SQLFile{"a": "generic a", "b": "mysql b", "c": "generic c", "d": "mysql d"}},
		{mariadb, "only.sql", SQLFile{"x": "generic x"}},
		// A file only the dialect has.
		{dbtarget.Dialect{Name: "lone"}, "lone.sql", SQLFile{"y": "lone y"}},
	}
	for _, c := range cases {
		got, err := LoadSQL(sqlTree, "sql", c.d, c.file)
		if err != nil {
			t.Errorf("%v %s: %v", c.d, c.file, err)
			continue
		}
		if !maps.Equal(got, c.want) {
			t.Errorf("%v %s:\n got %v\nwant %v", c.d, c.file, got, c.want)
		}
	}
}

func TestLoadSQLMissing(t *testing.T) {
	mariadb := dbtarget.Dialect{Name: "mariadb", Base: "mysql"}
	if _, err := LoadSQL(sqlTree, "sql", mariadb, "none.sql"); err == nil || !strings.Contains(err.Error(), "none.sql") {
		t.Errorf("a file in no layer: err = %v, want one naming it", err)
	}
	// The generic blocks alone are no dialect: a workload runs on those it
	// has a directory for, its own or its base's.
	_, err := LoadSQL(sqlTree, "sql", dbtarget.Dialect{Name: "sqlite"}, "tx.sql")
	var ue *exitcode.UserError
	if !errors.As(err, &ue) || err.Error() != "this workload does not run on sqlite: it has SQL for lone, mariadb, mysql, postgres only" {
		t.Errorf("a dialect without a directory: err = %v, want a user error naming the dialects it has", err)
	}
	if _, err := LoadSQL(sqlTree, "sql", mariadb, "dup.sql"); err == nil || !strings.Contains(err.Error(), `"y" named twice`) {
		t.Errorf("a block named twice in the base: err = %v", err)
	}
	// SQL that would go into no block, found by FuzzParseSQL.
	if _, err := LoadSQL(sqlTree, "sql", mariadb, "loose.sql"); err == nil || !strings.Contains(err.Error(), "loose.sql line 2: SQL before the first") {
		t.Errorf("SQL before the first block: err = %v", err)
	}
	if _, err := LoadSQL(sqlTree, "sql", mariadb, "blank.sql"); err == nil || !strings.Contains(err.Error(), "blank.sql line 3: a block without a name") {
		t.Errorf("a block without a name: err = %v", err)
	}
	// A block in no layer is a bug in the embedded files: Get panics,
	// naming it, so the tests that resolve every block catch it.
	f, err := LoadSQL(sqlTree, "sql", mariadb, "tx.sql")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "block z missing") {
			t.Errorf("Get of a block missing everywhere: recovered %v, want a panic naming it", r)
		}
	}()
	f.Get("z")
}

package sqldb

import (
	"slices"
	"testing"
)

func TestRewrite(t *testing.T) {
	cases := []struct {
		name, in          string
		numbered, ordered string
		order             []int
		takes             int
	}{
		{"none", "SELECT 1", "SELECT 1", "SELECT 1", nil, 0},
		{"in order", "VALUES ($1, $2, $3)", "VALUES (?1, ?2, ?3)", "VALUES (?, ?, ?)", nil, 3},
		{"repeated", "x >= $3 + 10 THEN x - $3 WHERE a = $1 AND b = $2",
			"x >= ?3 + 10 THEN x - ?3 WHERE a = ?1 AND b = ?2", "x >= ? + 10 THEN x - ? WHERE a = ? AND b = ?",
			[]int{2, 2, 0, 1}, 3},
		{"out of order", "SET a = $2 WHERE id = $1", "SET a = ?2 WHERE id = ?1", "SET a = ? WHERE id = ?", []int{1, 0}, 2},
		{"one repeated", "$1 + $1", "?1 + ?1", "? + ?", []int{0, 0}, 1},
		{"a skipped one", "$1, $3", "?1, ?3", "?, ?", []int{0, 2}, 3},
		{"two digits", "$10, $2", "?10, ?2", "?, ?", []int{9, 1}, 10},
		{"string literal", "SELECT '$1', 'it''s $2', $1", "SELECT '$1', 'it''s $2', ?1", "SELECT '$1', 'it''s $2', ?", nil, 1},
		{"quoted identifier", `SELECT "a$1", "b""$2", $1`, `SELECT "a$1", "b""$2", ?1`, `SELECT "a$1", "b""$2", ?`, nil, 1},
		{"backquoted identifier", "SELECT `$1`, $1", "SELECT `$1`, ?1", "SELECT `$1`, ?", nil, 1},
		{"dollar quoted", "DO $$ SELECT $1 $$; SELECT $2", "DO $$ SELECT $1 $$; SELECT ?2", "DO $$ SELECT $1 $$; SELECT ?", []int{1}, 2},
		{"tagged dollar quote", "AS $fn$ x $$ $1 $fn$, $1", "AS $fn$ x $$ $1 $fn$, ?1", "AS $fn$ x $$ $1 $fn$, ?", nil, 1},
		{"dollar in a name", "SELECT a$1 FROM t$2 WHERE x = $1", "SELECT a$1 FROM t$2 WHERE x = ?1", "SELECT a$1 FROM t$2 WHERE x = ?", nil, 1},
		{"comments", "SELECT $1 -- $2\n/* $3 */ + $2", "SELECT ?1 -- $2\n/* $3 */ + ?2", "SELECT ? -- $2\n/* $3 */ + ?", nil, 2},
		{"no number", "SELECT $ + $0 + $1", "SELECT $ + $0 + ?1", "SELECT $ + $0 + ?", nil, 1},
		{"unterminated literal", "SELECT $1, 'x $2", "SELECT ?1, 'x $2", "SELECT ?, 'x $2", nil, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got, order, takes := rewrite(c.in, Numbered); got != c.numbered || order != nil || takes != c.takes {
				t.Errorf("Numbered: %q, %v, %d; want %q, nil, %d", got, order, takes, c.numbered, c.takes)
			}
			if got, order, takes := rewrite(c.in, Positional); got != c.ordered || !slices.Equal(order, c.order) || takes != c.takes {
				t.Errorf("Positional: %q, %v, %d; want %q, %v, %d", got, order, takes, c.ordered, c.order, c.takes)
			}
		})
	}
}

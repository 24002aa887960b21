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
	}{
		{"none", "SELECT 1", "SELECT 1", "SELECT 1", nil},
		{"in order", "VALUES ($1, $2, $3)", "VALUES (?1, ?2, ?3)", "VALUES (?, ?, ?)", nil},
		{"repeated", "x >= $3 + 10 THEN x - $3 WHERE a = $1 AND b = $2",
			"x >= ?3 + 10 THEN x - ?3 WHERE a = ?1 AND b = ?2", "x >= ? + 10 THEN x - ? WHERE a = ? AND b = ?",
			[]int{2, 2, 0, 1}},
		{"out of order", "SET a = $2 WHERE id = $1", "SET a = ?2 WHERE id = ?1", "SET a = ? WHERE id = ?", []int{1, 0}},
		{"one repeated", "$1 + $1", "?1 + ?1", "? + ?", []int{0, 0}},
		{"a skipped one", "$1, $3", "?1, ?3", "?, ?", []int{0, 2}},
		{"two digits", "$10, $2", "?10, ?2", "?, ?", []int{9, 1}},
		{"string literal", "SELECT '$1', 'it''s $2', $1", "SELECT '$1', 'it''s $2', ?1", "SELECT '$1', 'it''s $2', ?", nil},
		{"quoted identifier", `SELECT "a$1", "b""$2", $1`, `SELECT "a$1", "b""$2", ?1`, `SELECT "a$1", "b""$2", ?`, nil},
		{"backquoted identifier", "SELECT `$1`, $1", "SELECT `$1`, ?1", "SELECT `$1`, ?", nil},
		{"dollar quoted", "DO $$ SELECT $1 $$; SELECT $2", "DO $$ SELECT $1 $$; SELECT ?2", "DO $$ SELECT $1 $$; SELECT ?", []int{1}},
		{"tagged dollar quote", "AS $fn$ x $$ $1 $fn$, $1", "AS $fn$ x $$ $1 $fn$, ?1", "AS $fn$ x $$ $1 $fn$, ?", nil},
		{"dollar in a name", "SELECT a$1 FROM t$2 WHERE x = $1", "SELECT a$1 FROM t$2 WHERE x = ?1", "SELECT a$1 FROM t$2 WHERE x = ?", nil},
		{"comments", "SELECT $1 -- $2\n/* $3 */ + $2", "SELECT ?1 -- $2\n/* $3 */ + ?2", "SELECT ? -- $2\n/* $3 */ + ?", nil},
		{"no number", "SELECT $ + $0 + $1", "SELECT $ + $0 + ?1", "SELECT $ + $0 + ?", nil},
		{"unterminated literal", "SELECT $1, 'x $2", "SELECT ?1, 'x $2", "SELECT ?, 'x $2", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got, order := rewrite(c.in, Numbered); got != c.numbered || order != nil {
				t.Errorf("Numbered: %q, %v; want %q, nil", got, order, c.numbered)
			}
			if got, order := rewrite(c.in, Positional); got != c.ordered || !slices.Equal(order, c.order) {
				t.Errorf("Positional: %q, %v; want %q, %v", got, order, c.ordered, c.order)
			}
		})
	}
}

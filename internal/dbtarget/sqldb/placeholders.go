package sqldb

import (
	"strconv"
	"strings"
)

// Placeholders is how a driver marks a statement's parameters. Workload
// SQL always writes PostgreSQL's $1..$N, in any order and as often as it
// likes; rewrite turns that into the driver's form.
type Placeholders int

const (
	// Numbered is ?N, which takes argument N wherever it appears (SQLite).
	Numbered Placeholders = iota + 1
	// Positional is a bare ?, which takes the next argument (MySQL), so the
	// arguments are laid out again, one per occurrence.
	Positional
)

// rewrite turns the $N placeholders of q into p's form. order lists, for
// each placeholder the driver sees, the index of the workload argument it
// takes; it is nil when the arguments pass as they are. takes is the
// highest N: the arguments the statement reads, of those it is given.
//
// Placeholders are looked for only in SQL proper: string literals ('...'),
// quoted identifiers ("..." and MySQL's `...`), comments and PostgreSQL's
// dollar-quoted bodies ($$...$$, $tag$...$tag$) pass unchanged. A quote
// inside a literal is written as two quotes, which every dialect reads the
// same way; a backslash escape is not understood.
func rewrite(q string, p Placeholders) (out string, order []int, takes int) {
	var b strings.Builder
	b.Grow(len(q))
	for i := 0; i < len(q); {
		c := q[i]
		var end int // the end of a span copied as it is
		switch {
		case c == '\'' || c == '"' || c == '`':
			end = quoted(q, i)
		case strings.HasPrefix(q[i:], "--"):
			end = through(q, i, "\n")
		case strings.HasPrefix(q[i:], "/*"):
			end = through(q, i+2, "*/")
		case c == '$' && (i == 0 || !identByte(q[i-1])):
			if n, w := number(q[i+1:]); w > 0 {
				takes = max(takes, n)
				if p == Numbered {
					b.WriteString("?" + strconv.Itoa(n))
				} else {
					b.WriteByte('?')
					order = append(order, n-1)
				}
				i += 1 + w
				continue
			}
			if tag := dollarTag(q[i:]); tag != "" {
				end = through(q, i+len(tag), tag)
			}
		}
		if end == 0 {
			end = i + 1
		}
		b.WriteString(q[i:end])
		i = end
	}
	for i, n := range order {
		if n != i {
			return b.String(), order, takes
		}
	}
	return b.String(), nil, takes
}

// quoted returns the end of the quoted span that starts at q[i], where a
// doubled quote stands for itself; an unterminated span runs to the end.
func quoted(q string, i int) int {
	quote := q[i]
	for j := i + 1; j < len(q); j++ {
		if q[j] == quote {
			if j+1 < len(q) && q[j+1] == quote {
				j++
				continue
			}
			return j + 1
		}
	}
	return len(q)
}

// through returns the end of the first close at or after q[from], or the
// end of q.
func through(q string, from int, close string) int {
	if j := strings.Index(q[from:], close); j >= 0 {
		return from + j + len(close)
	}
	return len(q)
}

// number reads the placeholder number at the start of s: its value and its
// width in bytes, or a width of 0 if s does not start with one (or with $0,
// which PostgreSQL does not have either).
func number(s string) (n, w int) {
	for w < len(s) && s[w] >= '0' && s[w] <= '9' {
		w++
	}
	n, err := strconv.Atoi(s[:w])
	if err != nil || n == 0 {
		return 0, 0
	}
	return n, w
}

// dollarTag returns the opening $$ or $tag$ at the start of s, or "".
func dollarTag(s string) string {
	for j := 1; j < len(s); j++ {
		switch c := s[j]; {
		case c == '$':
			return s[:j+1]
		case !identByte(c) || (j == 1 && c >= '0' && c <= '9'):
			return ""
		}
	}
	return ""
}

// identByte reports whether c can continue an identifier; a $ after one
// is part of the name (PostgreSQL allows a$1), not a placeholder.
func identByte(c byte) bool {
	return c == '_' || c == '$' || c >= 0x80 ||
		(c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

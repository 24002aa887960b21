// Package human formats what dbrig shows people: numbers with thousands
// separators, sizes (read and written as a person spells them, or shown
// in the unit that fits), a time left, errors cut to one line, and text made safe for a
// terminal.
package human

import (
	"math"
	"strconv"
	"strings"
)

// Thousands rounds v and groups its digits: 72975.4 → "72,975". NaN and
// infinities, which have no digits, are "—".
func Thousands(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "—"
	}
	r := math.Round(v)
	s := strconv.FormatFloat(math.Abs(r), 'f', 0, 64)
	var b strings.Builder
	if r < 0 {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// FirstLine is s up to its first line break.
func FirstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// Unbroken is s on one line, its line breaks written as \n and \r: a value
// someone wrote over several lines, shown whole in a one-line message.
func Unbroken(s string) string { return lineBreaks.Replace(s) }

var lineBreaks = strings.NewReplacer("\n", `\n`, "\r", `\r`)

// OneLine is err's message up to its first line break: the part a person
// reads in a one-line error or an error sample.
func OneLine(err error) string { return FirstLine(err.Error()) }

// Count says n of a noun, plural but for one: "1 session", "3 sessions".
func Count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

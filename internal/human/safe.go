package human

import (
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Safe is s with what a terminal would act on instead of showing written
// out as Go writes it in a string: control characters (ESC \x1b, BEL \a,
// CR \r, line breaks, C1's \u009b...), the marks that reorder text on the
// screen (\u202e) and bytes that are not UTF-8 (\xff). Text from a result
// document, printed as is, could otherwise clear the screen, retitle the
// window or write over a line.
func Safe(s string) string {
	if !strings.ContainsFunc(s, unsafeRune) && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x` + strconv.FormatUint(uint64(s[0])|0x100, 16)[1:])
		case unsafeRune(r):
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[:size])
		}
		s = s[size:]
	}
	return b.String()
}

func unsafeRune(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)
}

// SafeWriter writes to w what Safe makes of each line written to it,
// keeping the line breaks between them: for output made of a document's
// text, such as a report.
func SafeWriter(w io.Writer) io.Writer { return safeWriter{w} }

type safeWriter struct{ w io.Writer }

func (s safeWriter) Write(p []byte) (int, error) {
	lines := strings.Split(string(p), "\n")
	for i, l := range lines {
		lines[i] = Safe(l)
	}
	if _, err := io.WriteString(s.w, strings.Join(lines, "\n")); err != nil {
		return 0, err
	}
	return len(p), nil
}

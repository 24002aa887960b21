package result

import (
	"bufio"
	"io"
)

// writeIndented writes the compact JSON b (json.Marshal's, which has no
// space outside its strings) to w as json.Indent would with two spaces a
// level, and a newline after it, without a second copy of it in memory:
// json.MarshalIndent holds the compact and the indented document at once,
// 2.3 GB for a merged run of two parts of a day each.
func writeIndented(w io.Writer, b []byte) error {
	bw := bufio.NewWriter(w)
	depth := 0
	newline := func() {
		bw.WriteByte('\n')
		for range depth {
			bw.WriteString("  ")
		}
	}
	// open is an object or array just opened, whose first line waits for
	// its first member: an empty one stays {} or [], as json.Indent has it.
	var inString, escaped, open bool
	for _, c := range b {
		if inString {
			bw.WriteByte(c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		if open && c != '}' && c != ']' {
			open = false
			depth++
			newline()
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			open = true
		case ',':
			bw.WriteByte(c)
			newline()
			continue
		case ':':
			bw.WriteString(": ")
			continue
		case '}', ']':
			if open {
				open = false
			} else {
				depth--
				newline()
			}
		}
		bw.WriteByte(c)
	}
	bw.WriteByte('\n')
	return bw.Flush()
}

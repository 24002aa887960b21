package server

import (
	"io"
	"os"
	"regexp"
	"strings"
)

// FileSize is path's size, 0 when it cannot be read.
func FileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// ReadFrom reads what a server logged since offset, capped so a chatty
// failure cannot flood an error.
func ReadFrom(path string, offset int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	const maxTail = 64 << 10
	if size := FileSize(path); size-offset > maxTail {
		offset = size - maxTail
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return ""
	}
	b, _ := io.ReadAll(f)
	return string(b)
}

// LastLines joins the last n non-blank lines of s into one line.
func LastLines(s string, n int) string { return HeadTail(s, 0, n) }

// HeadTail joins the first head and the last tail non-blank lines of s
// into one line, with "..." where lines were left out: a setup command
// says what it was doing first and why it gave up last, and its cause can
// be at either end.
func HeadTail(s string, head, tail int) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > head+tail {
		lines = append(lines[:head:head], append([]string{"..."}, lines[len(lines)-tail:]...)...)
		if head == 0 {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "; ")
}

// Messages are the lines of a server's log that keep picks, each with
// prefix (the date and such) taken off and its blanks squeezed.
func Messages(log string, prefix *regexp.Regexp, keep func(line string) bool) []string {
	var out []string
	for _, line := range strings.Split(log, "\n") {
		line = strings.TrimSpace(prefix.ReplaceAllString(line, ""))
		if line != "" && keep(line) {
			out = append(out, strings.Join(strings.Fields(line), " "))
		}
	}
	return out
}

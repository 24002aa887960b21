package server

import (
	"fmt"
	"regexp"
	"strings"
)

// CrashReason says how the server process name (pid, when known) died,
// from the lines of its log that match (once prefix, the date and such,
// is taken off each): the last of them, repeats dropped (clients cut off
// by a crash repeat the same message), or that it was killed from
// outside when the log says nothing.
func CrashReason(log string, prefix, match *regexp.Regexp, name string, pid int) string {
	var keep []string
	for _, line := range Messages(log, prefix, match.MatchString) {
		if n := len(keep); n > 0 && keep[n-1] == line {
			continue
		}
		keep = append(keep, line)
	}
	who := name
	if pid > 0 {
		who = fmt.Sprintf("%s (pid %d)", name, pid)
	}
	if len(keep) == 0 {
		return who + " is gone without a clean shutdown, and the log says nothing about it: it was killed from outside (SIGKILL, the OOM killer, a reboot)"
	}
	if len(keep) > 6 {
		keep = keep[len(keep)-6:]
	}
	return who + " is gone without a clean shutdown; the log says: " + strings.Join(keep, "; ")
}

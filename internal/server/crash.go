package server

import (
	"errors"
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
	for _, line := range strings.Split(log, "\n") {
		line = strings.TrimSpace(prefix.ReplaceAllString(line, ""))
		if line == "" || !match.MatchString(line) {
			continue
		}
		line = strings.Join(strings.Fields(line), " ")
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

// AckCrash is a Stop of a server this process does not run: a crash that
// the state file in dir still records, the server being gone, is
// acknowledged, so that status stops reporting it, and the cgroup the
// server ran in is removed. alive looks whether the server runs.
func AckCrash(dir string, alive func() (bool, error), c *Confined) error {
	st, err := ReadState(dir)
	if err != nil || !st.Running {
		return nil
	}
	up, err := alive()
	if err != nil || up {
		return err
	}
	return errors.Join(WriteStopped(dir), c.Remove())
}

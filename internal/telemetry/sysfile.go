package telemetry

import (
	"bytes"
	"os"
	"strconv"
	"strings"
)

// readUint reads a file holding one number (sysfs, cgroup files) into buf,
// which it returns for the next read so that a sample reuses it. A file
// that cannot be read or parsed reads as 0.
func readUint(path string, buf []byte) (uint64, []byte) {
	if cap(buf) < 64 {
		buf = make([]byte, 64)
	}
	buf = buf[:cap(buf)]
	f, err := os.Open(path)
	if err != nil {
		return 0, buf
	}
	n, _ := f.Read(buf)
	f.Close()
	v, err := strconv.ParseUint(string(bytes.TrimSpace(buf[:n])), 10, 64)
	if err != nil {
		return 0, buf
	}
	return v, buf
}

// readLine is a small file's content without its newline; "" when it
// cannot be read.
func readLine(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// selected is the bracketed choice of a sysfs list,
// "always [madvise] never" -> "madvise"; the whole line when none is.
func selected(line string) string {
	if i := strings.IndexByte(line, '['); i >= 0 {
		if j := strings.IndexByte(line[i:], ']'); j > 0 {
			return line[i+1 : i+j]
		}
	}
	return line
}

package telemetry

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"
)

// keptFiles keeps the files a sample reads open between samples, and
// rereads them from the start: opening a /proc or /sys file walks its whole
// path, which a sample a second pays for from a cold cache, and that cost
// more than the reading.
type keptFiles map[string]*os.File

// read reads path's content from its start into buf.
func (k keptFiles) read(path string, buf []byte) (int, error) {
	f, ok := k[path]
	if !ok {
		var err error
		if f, err = os.Open(path); err != nil {
			return 0, err
		}
		k[path] = f
	}
	n, err := f.ReadAt(buf, 0)
	if errors.Is(err, io.EOF) {
		err = nil
	}
	if err != nil {
		k.close(path) // a process gone, a cgroup removed: open it afresh next time
	}
	return n, err
}

func (k keptFiles) close(path string) {
	if f, ok := k[path]; ok {
		f.Close()
		delete(k, path)
	}
}

func (k keptFiles) closeAll() {
	for path := range k {
		k.close(path)
	}
}

// readUint reads a file holding one number (sysfs, cgroup files) into buf,
// which it returns for the next read so that a sample reuses it. A file
// that cannot be read or parsed reads as 0.
func (k keptFiles) readUint(path string, buf []byte) (uint64, []byte) {
	if cap(buf) < 64 {
		buf = make([]byte, 64)
	}
	buf = buf[:cap(buf)]
	n, err := k.read(path, buf)
	if err != nil {
		return 0, buf
	}
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

package result

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/human"
)

// DefaultMaxDocumentSize is the largest document read unless told
// otherwise: a part of a day's run at one sample a second, with the
// database's telemetry, is about 500 MB.
const DefaultMaxDocumentSize = 1 << 30

// MaxDocumentSize is the largest document ReadFile reads
// (--max-document-size): a document is held whole as it is decoded, and
// decoded takes about as much again.
var MaxDocumentSize int64 = DefaultMaxDocumentSize

// ReadFile is the document at path, read whole. A file larger than
// MaxDocumentSize is refused before it is read, and anything that is no
// JSON object at its first byte (a device, a binary) before more is read.
// Its errors about the file itself are *fs.PathError, as os.ReadFile's.
func ReadFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var buf bytes.Buffer
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		if st.Size() > MaxDocumentSize {
			return nil, tooLarge(fmt.Sprintf("%s is %s,", path, human.Bytes(float64(st.Size()))))
		}
		buf.Grow(int(st.Size()))
	}
	r := bufio.NewReader(io.LimitReader(f, MaxDocumentSize+1))
	if err := startsObject(path, r); err != nil {
		return nil, err
	}
	if _, err := buf.ReadFrom(r); err != nil {
		return nil, &os.PathError{Op: "read", Path: path, Err: err}
	}
	if int64(buf.Len()) > MaxDocumentSize {
		return nil, tooLarge(path + " is")
	}
	return buf.Bytes(), nil
}

// startsObject refuses r unless its first byte but white space opens a
// JSON object, as every document does; r then starts at that byte.
func startsObject(path string, r *bufio.Reader) error {
	for {
		c, err := r.ReadByte()
		switch {
		case err == io.EOF:
			return fmt.Errorf("%s: not a dbrig result: it holds no JSON object", path)
		case err != nil:
			return &os.PathError{Op: "read", Path: path, Err: err}
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			continue
		case c != '{':
			return fmt.Errorf("%s: not a dbrig result: it starts with byte %#02x, where a document starts with {", path, c)
		}
		return r.UnreadByte()
	}
}

// tooLarge is the refusal of a document past MaxDocumentSize, after what
// says which and how large.
func tooLarge(what string) error {
	return exitcode.Userf("%s more than the %s a document may be: --max-document-size raises the limit, where the machine has memory for a few times the document",
		what, human.Bytes(float64(MaxDocumentSize)))
}

// Package foreign reads other tools' results into the catalogue, so that
// a database measured by dbrig, HammerDB, BenchBase and k6 is listed,
// charted and compared in one place: HammerDB's jobs database (every job
// in it, each made a document of this package's own), BenchBase's
// summary files and k6's end-of-test summaries (each read as it is). It
// registers their importers when it is linked in.
//
// Only facts and data formats of the tools are used here: HammerDB is GPL
// and k6 AGPL, and nothing of theirs is copied.
package foreign

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/dbrig/dbrig/internal/catalog"
)

func init() {
	catalog.RegisterImporter(catalog.Importer{Tool: hammerdbTool, Split: splitHammerDB, Match: matchHammerDB, Index: indexHammerDB})
	catalog.RegisterImporter(catalog.Importer{Tool: benchbaseTool, Match: matchBenchBase, Index: indexBenchBase})
	catalog.RegisterImporter(catalog.Importer{Tool: k6Tool, Match: matchK6, Index: indexK6})
}

// targetKind is dbrig's name for the database another tool names, so
// that a target filter finds every tool's runs on it alike.
func targetKind(name string) string {
	n := strings.ToLower(strings.TrimSpace(name))
	switch n {
	case "pg", "postgresql", "postgres":
		return "postgres"
	case "mysql", "mariadb", "sqlite", "oracle", "cockroachdb", "yugabyte":
		return n
	case "maria":
		return "mariadb"
	case "mssqlserver", "sqlserver", "mssql":
		return "sqlserver"
	case "db2":
		return "db2"
	}
	return n
}

// decode reads b, one JSON value and nothing after it, into v.
func decode(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	if err := d.Decode(v); err != nil {
		return err
	}
	if _, err := d.Token(); err != io.EOF {
		return errors.New("more after the JSON value")
	}
	return nil
}

// object is b's top-level keys, if b is a JSON object that has any of
// the strings in it (all objects for none): a document of dbrig's may be
// large, and is parsed by each Match only if it could be that tool's.
func object(b []byte, needles ...string) (map[string]json.RawMessage, bool) {
	if len(needles) > 0 && !slices.ContainsFunc(needles, func(s string) bool { return bytes.Contains(b, []byte(s)) }) {
		return nil, false
	}
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return nil, false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return nil, false
	}
	return m, true
}

// text is a JSON string or number as text; false for anything else.
func text(raw json.RawMessage) (string, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil && n != "" {
		return n.String(), true
	}
	return "", false
}

// number is a JSON number, or a string holding one, that is finite.
func number(raw json.RawMessage) (float64, bool) {
	s, ok := text(raw)
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

func ptr(f float64) *float64 { return &f }

// formatNumber is f as the catalogue's config writes numbers.
func formatNumber(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// errField says that a document of tool lacks what it must have.
func errField(tool, field string, why string) error {
	return fmt.Errorf("not a %s result this dbrig reads: %s %s", tool, field, why)
}

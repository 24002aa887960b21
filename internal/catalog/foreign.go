package catalog

import (
	"slices"
)

// Importer reads another tool's results into entries, so that the same
// database measured by several tools is compared in one place. Each
// registers itself from a package of its own.
type Importer struct {
	// Tool names the tool ("hammerdb"), as Entry.Tool.
	Tool string
	// Split is optional: for a file that holds many results (a jobs
	// database), each as a JSON document of the importer's own making,
	// which Index then reads; ok is false for a file not of this tool.
	Split func(path string, b []byte) (docs [][]byte, ok bool, err error)
	// Match tells whether the JSON document b is this tool's.
	Match func(b []byte) bool
	// Index reads the document b, which Match took, into its entry; the
	// catalogue sets its ID, size and path.
	Index func(b []byte) (*Entry, error)
}

var importers []Importer

// RegisterImporter adds an importer; a tool registered twice panics.
func RegisterImporter(i Importer) {
	if slices.ContainsFunc(importers, func(o Importer) bool { return o.Tool == i.Tool }) {
		panic("catalog: importer " + i.Tool + " registered twice")
	}
	importers = append(importers, i)
}

// Split is the documents the file at path holds, with b its bytes: b
// itself, unless an importer reads it as a file of many.
func Split(path string, b []byte) ([][]byte, error) {
	for _, i := range importers {
		if i.Split == nil {
			continue
		}
		docs, ok, err := i.Split(path, b)
		if ok || err != nil {
			return docs, err
		}
	}
	return [][]byte{b}, nil
}

// foreign is the importer whose tool made the JSON document b, if any.
func foreign(b []byte) (Importer, bool) {
	for _, i := range importers {
		if i.Match != nil && i.Match(b) {
			return i, true
		}
	}
	return Importer{}, false
}

// Tools are the tools whose results the catalogue reads.
func Tools() []string {
	out := []string{"dbrig"}
	for _, i := range importers {
		out = append(out, i.Tool)
	}
	return out
}

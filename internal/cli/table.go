package cli

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/human"
	"github.com/spf13/pflag"
)

// outFormat is how a catalogue command prints: a table for a person,
// JSON for a program, CSV for a spreadsheet, Markdown for a pull
// request's comment.
type outFormat struct {
	json, csv, markdown bool
}

func (o *outFormat) add(fs *pflag.FlagSet) {
	fs.BoolVar(&o.json, "json", false, "print JSON")
	fs.BoolVar(&o.csv, "csv", false, "print CSV")
	fs.BoolVar(&o.markdown, "markdown", false, "print a Markdown table (for a pull request's comment)")
}

func (o *outFormat) check() error {
	n := 0
	for _, b := range []bool{o.json, o.csv, o.markdown} {
		if b {
			n++
		}
	}
	if n > 1 {
		return exitcode.Userf("--json, --csv and --markdown: choose one")
	}
	return nil
}

// table is rows of text under a head; v is what --json prints.
type table struct {
	head []string
	rows [][]string
}

// add adds a row, each cell on one line, so that a tab or a line break
// in a document's text cannot break the table.
func (t *table) add(cells ...string) {
	for i, c := range cells {
		cells[i] = strings.Join(strings.Fields(c), " ")
	}
	t.rows = append(t.rows, cells)
}

// print writes the table as o says, or v as JSON. Every cell goes out
// through human.SafeWriter's rules, since a document's text (a tag, a
// config value) is anyone's.
func (o *outFormat) print(w io.Writer, t *table, v any) error {
	switch {
	case o.json:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	case o.csv:
		cw := csv.NewWriter(w)
		cw.Write(t.head)
		for _, r := range t.rows {
			cw.Write(r)
		}
		cw.Flush()
		return cw.Error()
	case o.markdown:
		fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(mdCells(t.head), " | "), strings.Repeat("---|", len(t.head)))
		for _, r := range t.rows {
			fmt.Fprintf(w, "| %s |\n", strings.Join(mdCells(r), " | "))
		}
		return nil
	}
	tw := tabwriter.NewWriter(human.SafeWriter(w), 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(t.head, "\t"))
	for _, r := range t.rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}

// mdCells escapes what would end a Markdown cell or start markup.
func mdCells(cells []string) []string {
	r := strings.NewReplacer("|", `\|`, "\n", " ", "\r", " ", "<", "&lt;", ">", "&gt;", "`", "\\`", "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`)
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = r.Replace(c)
	}
	return out
}

// stamp is a start time as a table shows it, "—" where the document gave
// none (k6's export keeps no time).
func stamp(t time.Time, layout string) string {
	if t.IsZero() {
		return "—"
	}
	return t.Format(layout)
}

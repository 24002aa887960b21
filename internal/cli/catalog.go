package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dbrig/dbrig/internal/catalog"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/human"
	"github.com/dbrig/dbrig/internal/result"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	// The catalogue's backends, and the importers of other tools'
	// results, register themselves.
	_ "github.com/dbrig/dbrig/internal/catalog/foreign"
	_ "github.com/dbrig/dbrig/internal/catalog/postgres"
	_ "github.com/dbrig/dbrig/internal/catalog/sqlite"
)

// catalogFlags are where the catalogue is and, for a command that writes
// documents, whether and how they are catalogued.
type catalogFlags struct {
	url    string
	off    bool
	tags   []string
	commit string
}

const catalogUsage = "the results catalogue: sqlite:PATH or postgres://USER@HOST/DB (default $" + catalog.EnvURL + ", else " + catalog.DefaultURL + ")"

// addCatalogFlag adds --catalog, for a command that reads the catalogue.
func addCatalogFlag(fs *pflag.FlagSet, f *catalogFlags) {
	fs.StringVar(&f.url, "catalog", "", catalogUsage)
}

// addRecordFlags adds the flags of a command whose documents are
// catalogued as they are written.
func addRecordFlags(fs *pflag.FlagSet, f *catalogFlags) {
	addCatalogFlag(fs, f)
	fs.BoolVar(&f.off, "no-catalog", false, "do not record the document in the results catalogue")
	fs.StringArrayVar(&f.tags, "tag", nil, "a tag for the document in the catalogue (repeatable): dbrig runs --tag NAME finds it")
	fs.StringVar(&f.commit, "commit", "", "the commit (of your application, your schema, your build) the run measured, kept in the catalogue")
}

// URL is the catalogue the flags name: --catalog, else the environment's,
// else the default beside the embedded target.
func (f *catalogFlags) URL() string {
	return cmp.Or(f.url, os.Getenv(catalog.EnvURL), catalog.DefaultURL)
}

func (f *catalogFlags) open(ctx context.Context) (*catalog.Catalog, error) {
	return catalog.Open(ctx, f.URL())
}

// openFiltered reads ff's filter, then opens the catalogue it applies
// to: a wrong filter is refused before the catalogue is touched.
func (f *catalogFlags) openFiltered(ctx context.Context, ff *filterFlags) (*catalog.Catalog, catalog.Filter, error) {
	filter, err := ff.Filter(time.Now())
	if err != nil {
		return nil, filter, err
	}
	c, err := f.open(ctx)
	return c, filter, err
}

// check opens the catalogue a run will record into before the run, so
// that a wrong --catalog is one line and exit 2 and not a run's end.
func (f *catalogFlags) check(ctx context.Context) error {
	if f.off {
		if f.url != "" || len(f.tags) > 0 || f.commit != "" {
			return exitcode.Userf("--no-catalog records nothing: drop --catalog, --tag and --commit, or --no-catalog")
		}
		return nil
	}
	c, err := f.open(ctx)
	if err != nil {
		return err
	}
	return c.Close()
}

// record catalogues the documents at paths, as written, the last
// standing for them all (a sweep after its runs): one line on stdout,
// and a failure is a warning on stderr, never the command's, since the
// documents themselves are kept.
func (f *catalogFlags) record(ctx context.Context, stdout, stderr io.Writer, paths ...string) {
	if f.off || len(paths) == 0 {
		return
	}
	c, err := f.open(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "dbrig: not catalogued: %v; the documents are kept: dbrig catalog import them later\n", human.OneLine(err))
		return
	}
	defer c.Close()
	var last *catalog.Entry
	for _, p := range paths {
		e, err := addFile(ctx, c, p, catalog.Meta{Tags: f.tags, Commit: f.commit})
		if err != nil {
			fmt.Fprintf(stderr, "dbrig: %s not catalogued: %v; the document is kept: dbrig catalog import it later\n", p, human.OneLine(err))
			continue
		}
		last = e
	}
	if last == nil {
		return
	}
	id := catalog.ShortID(last.ID)
	also := ""
	if len(paths) > 1 {
		also = fmt.Sprintf(" with %s", human.Count(len(paths)-1, "run"))
	}
	fmt.Fprintf(stdout, "Catalogued: %s %s%s (dbrig runs show %s)\n", last.Kind, id, also, id)
}

// readDocuments is the documents in the file at path: the file itself,
// or the results another tool keeps many of in one file.
func readDocuments(path string) ([][]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, unwrapPath(err)
	}
	if st.Size() > result.MaxDocumentSize {
		return nil, fmt.Errorf("%s is larger than a document may be (--max-document-size)", human.Bytes(float64(st.Size())))
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, unwrapPath(err)
	}
	return catalog.Split(path, b)
}

// addFile catalogues the document at path.
func addFile(ctx context.Context, c *catalog.Catalog, path string, m catalog.Meta) (*catalog.Entry, error) {
	b, err := result.ReadFile(path)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	e, _, err := c.Add(ctx, abs, b, m)
	return e, err
}

func newCatalog() *cobra.Command {
	var f catalogFlags
	c := &cobra.Command{
		Use:   "catalog",
		Short: "Import documents into the results catalogue",
		Long: `The results catalogue keeps every run, sweep and merged document dbrig
writes (unless --no-catalog), indexed by workload, target, host, config,
headline metrics, verdict, tags and commit: dbrig runs, history, regress,
compare and serve read it. The documents stay the source of truth; the
catalogue keeps a copy of each, identified by a hash of its bytes.`,
		Example: "  dbrig catalog import dbrig-results/\n" +
			"  dbrig catalog import --catalog postgres://bench@perfdb/catalog --tag nightly results/",
	}
	imp := &cobra.Command{
		Use:   "import PATH...",
		Short: "Catalogue the documents in files and directories",
		Long: `Catalogues each document named, and every .json document (and .db file)
under each directory named, of every schema version. Other tools' results
are read too: HammerDB's jobs database (each job an entry), BenchBase's
summary JSON and k6's end-of-test summary, each marked with its tool, so that
the same database measured by several tools is compared in one place. A document already catalogued is
left as it is (a document is known by a hash of its bytes), so importing
twice does nothing; files that are not documents are named and skipped.`,
		Example: "  dbrig catalog import dbrig-results/\n  dbrig catalog import old-runs/ --tag pg15 --commit 4f2a9c1",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return exitcode.Userf("name the documents or directories to import: dbrig catalog import DIR")
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			return importPaths(c.Context(), &f, args, c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	addRecordFlags(imp.Flags(), &f)
	imp.Flags().Lookup("no-catalog").Hidden = true
	c.AddCommand(imp)
	return c
}

// importPaths catalogues what paths name, saying how many were new, how
// many were there already, and which files were skipped and why.
func importPaths(ctx context.Context, f *catalogFlags, paths []string, stdout, stderr io.Writer) error {
	if f.off {
		return exitcode.Userf("--no-catalog: an import records into the catalogue")
	}
	var files []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return exitcode.Userf("%s: %v", p, unwrapPath(err))
		}
		if !st.IsDir() {
			files = append(files, p)
			continue
		}
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			// HammerDB names its jobs database hammer.DB.
			if ext := strings.ToLower(filepath.Ext(path)); !d.IsDir() && (ext == ".json" || ext == ".db") {
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			return exitcode.Userf("%s: %v", p, unwrapPath(err))
		}
	}
	c, err := f.open(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	p := newProgress(stderr)
	var added, there, skipped int
	for i, path := range files {
		p.update(fmt.Sprintf("Importing %d of %d: %s", i+1, len(files), path))
		docs, err := readDocuments(path)
		if err != nil {
			p.done()
			fmt.Fprintf(stderr, "skipped %s: %v\n", path, human.OneLine(err))
			skipped++
			continue
		}
		abs, _ := filepath.Abs(path)
		for _, b := range docs {
			_, isNew, err := c.Add(ctx, cmp.Or(abs, path), b, catalog.Meta{Tags: f.tags, Commit: f.commit})
			switch {
			case errors.Is(err, catalog.ErrStore):
				p.done()
				return err
			case err != nil:
				p.done()
				fmt.Fprintf(stderr, "skipped %s: %v\n", path, human.OneLine(err))
				skipped++
			case isNew:
				added++
			default:
				there++
			}
		}
	}
	p.done()
	fmt.Fprintf(stdout, "Imported %s into %s; %s already there, %s skipped\n",
		human.Count(added, "document"), c.Name(), human.Count(there, "document"), human.Count(skipped, "file"))
	return nil
}

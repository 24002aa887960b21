package experiment

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/result"
)

// Sweep is an experiment being run: its spec, the expanded points, and
// the sweep document, which lives in Dir/sweep.json.
type Sweep struct {
	Spec   *Spec
	Points []Point
	Doc    *result.Sweep
	Dir    string
}

// New lays out a fresh sweep of spec in dir; nothing runs yet.
func New(spec *Spec, dir string) *Sweep {
	points := spec.Points()
	info := spec.Info()
	doc := &result.Sweep{
		SchemaVersion: result.SchemaVersion, Kind: result.SweepKind,
		Name: spec.Name, Workload: spec.Workload, Spec: spec.JSON(),
		Metrics: result.Defs(info), PrimaryMetric: info.Primary, PrimaryTx: info.PrimaryTx,
		Varied: spec.Varied(), Repeat: spec.Repeat,
		Order: Order(len(points), spec.Repeat),
	}
	if spec.Target.Managed {
		doc.Target = result.Target{Kind: strings.Join(spec.Target.Kinds(), ", ")}
		if len(spec.Target.Settings) > 0 {
			doc.Settings = map[string]string{}
			for _, p := range spec.Target.Settings {
				doc.Settings[p.Name] = p.Value
			}
		}
	} else {
		doc.Target = result.Target{URL: dbtarget.Redact(spec.Target.URL)}
	}
	if len(spec.Baseline) > 0 {
		doc.Baseline = map[string]string{}
		for _, b := range spec.Baseline {
			doc.Baseline[b.Name] = b.Value
		}
	}
	for i, p := range points {
		doc.Points = append(doc.Points, result.SweepPoint{
			Params: p.Map(), Runs: make([]string, spec.Repeat),
			Values: map[string][]float64{}, P95: []float64{}, BaselinePoint: spec.BaselineOf(points, i),
		})
	}
	return &Sweep{Spec: spec, Points: points, Doc: doc, Dir: dir}
}

// Path is where the sweep document lives.
func (s *Sweep) Path() string { return filepath.Join(s.Dir, "sweep.json") }

// Resume opens the sweep in dir to carry on from its last finished run.
// url replaces the stored target URL, which never holds a password; it
// must name the same target.
func Resume(dir, url string) (*Sweep, error) {
	path := filepath.Join(dir, "sweep.json")
	if _, err := os.Stat(path); err != nil {
		return nil, exitcode.Userf("%s holds no sweep to resume (no sweep.json)", dir)
	}
	doc, err := result.ReadSweep(path)
	if err != nil {
		return nil, exitcode.Userf("%v", err)
	}
	spec, err := Parse(path+" (spec)", doc.Spec)
	if err != nil {
		return nil, err
	}
	switch {
	case url != "" && spec.Target.Managed:
		return nil, exitcode.Userf("--target: the sweep in %s runs on a managed server, not a URL", dir)
	case url != "" && dbtarget.Redact(url) != spec.Target.URL:
		return nil, exitcode.Userf("--target %s is not the sweep's target (%s)", dbtarget.Redact(url), spec.Target.URL)
	case url != "":
		spec.Target.URL = url
	}
	points := spec.Points()
	if len(points) != len(doc.Points) || len(doc.Order) != len(points)*spec.Repeat || doc.Done > len(doc.Order) {
		return nil, exitcode.Userf("%s: the points do not match the sweep's spec; the document was edited", path)
	}
	for i, p := range points {
		if !maps.Equal(p.Map(), doc.Points[i].Params) {
			return nil, exitcode.Userf("%s: point %d does not match the sweep's spec; the document was edited", path, i+1)
		}
	}
	return &Sweep{Spec: spec, Points: points, Doc: doc, Dir: dir}, nil
}

func (s *Sweep) addNote(note string) {
	if !slices.Contains(s.Doc.Notes, note) {
		s.Doc.Notes = append(s.Doc.Notes, note)
	}
}

func (s *Sweep) save() error {
	if err := result.WriteSweep(s.Path(), s.Doc); err != nil {
		return fmt.Errorf("write %s: %w", s.Path(), err)
	}
	return nil
}

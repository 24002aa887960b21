package experiment_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/experiment"
)

func mustParse(t *testing.T, yaml string) *experiment.Spec {
	t.Helper()
	s, err := experiment.Parse("s.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestMatrix(t *testing.T) {
	s := mustParse(t, good)
	points := s.Points()
	var labels []string
	for _, p := range points {
		labels = append(labels, p.Label())
	}
	want := []string{
		"shared_buffers=128MB vus=2", "shared_buffers=128MB vus=4",
		"shared_buffers=256MB vus=2", "shared_buffers=256MB vus=4",
		"shared_buffers=1GB vus=2", "shared_buffers=1GB vus=4",
		"shared_buffers=2GB vus=2", "shared_buffers=2GB vus=4",
	}
	if !slices.Equal(labels, want) {
		t.Errorf("points\n%s\nwant (first key outermost)\n%s", strings.Join(labels, "\n"), strings.Join(want, "\n"))
	}
	// Each point compares with the baseline of its own VU level.
	for i, wantBase := range []int{-1, -1, 0, 1, 0, 1, 0, 1} {
		if got := s.BaselineOf(points, i); got != wantBase {
			t.Errorf("baseline of point %d (%s) = %d, want %d", i, labels[i], got, wantBase)
		}
	}
	if !s.IsBaseline(points[1]) || s.IsBaseline(points[2]) {
		t.Error("IsBaseline wrong")
	}
	set := s.ServerSettings(points[5])
	if fmt.Sprint(set) != "map[max_connections:100 shared_buffers:1GB]" {
		t.Errorf("server settings of point 6: %v", set)
	}
	var run []string
	for _, p := range s.RunParams(points[5]) {
		run = append(run, p.Name+"="+p.Value)
	}
	if got := strings.Join(run, " "); got != "rampup=20s duration=60s mode=procs connections=0 vus=4" {
		t.Errorf("run params of point 6: %s", got)
	}
}

func TestMatrixOrder(t *testing.T) {
	got := experiment.Order(3, 2)
	want := [][2]int{{0, 1}, {1, 1}, {2, 1}, {0, 2}, {1, 2}, {2, 2}}
	if !slices.Equal(got, want) {
		t.Errorf("order %v, want interleaved %v", got, want)
	}
	if got := experiment.Order(1, 1); !slices.Equal(got, [][2]int{{0, 1}}) {
		t.Errorf("order %v", got)
	}
	// Nothing varied: one point.
	s := mustParse(t, "target: {url: 'sqlite:x.db'}\nworkload: tproc-c\nrepeat: 2\n")
	if n := len(s.Points()); n != 1 {
		t.Errorf("%d points with nothing varied, want 1", n)
	}
}

func TestMatrixEstimate(t *testing.T) {
	s := mustParse(t, good)
	points := s.Points()
	order := experiment.Order(len(points), s.Repeat)
	// 24 runs × (20s + 60s + 5s), shared_buffers changes 4 times per
	// repetition: 12 starts × 3s, and 8 warehouses × 15s of build.
	want := 24*85*time.Second + 12*3*time.Second + 8*15*time.Second
	if got := s.Estimate(points, order, 0, 1); got != want {
		t.Errorf("estimate %s, want %s", got, want)
	}
	if n := s.Restarts(points, order); n != 12 {
		t.Errorf("restarts %d, want 12", n)
	}
	// From run 2 on, in the same settings as run 1: no start for it.
	want = 22*85*time.Second + 11*3*time.Second
	if got := s.Estimate(points, order, 2, 0); got != want {
		t.Errorf("estimate from run 3 %s, want %s", got, want)
	}
}

//go:build unix

package main

import (
	"context"
	"os"
	"strings"
	"time"

	"github.com/dbrig/dbrig/bench/internal/harness"
	"github.com/jackc/pgx/v5"
)

// sample is one reading of the server during a HammerDB run.
type sample struct {
	at   time.Time
	cpu  time.Duration // the postmaster's process tree, so far
	next int64         // sum(d_next_o_id)
}

// sampler reads the server's CPU and sum(d_next_o_id) once a second
// while HammerDB runs, and notes at which samples its log first showed
// the window's start and end lines.
type sampler struct {
	url, log   string
	pid        int
	samples    []sample
	start, end int // indexes into samples; -1 until seen
	err        error
}

// watch samples until ctx ends; harness.Watched runs it beside HammerDB.
func (s *sampler) watch(ctx context.Context, _ int) {
	s.start, s.end = -1, -1
	conn, err := pgx.Connect(ctx, s.url)
	if err != nil {
		s.err = err
		return
	}
	defer conn.Close(context.WithoutCancel(ctx))
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		// The log first, then the reading: a line seen is then always
		// before the sample it marks, as HammerDB takes its count right
		// after printing it, at both edges alike.
		log, _ := os.ReadFile(s.log)
		var smp sample
		smp.cpu, err = harness.TreeCPU(s.pid)
		if err == nil {
			err = conn.QueryRow(ctx, "SELECT sum(d_next_o_id) FROM district").Scan(&smp.next)
		}
		if err != nil {
			if ctx.Err() == nil {
				s.err = err
			}
			return
		}
		smp.at = time.Now()
		s.samples = append(s.samples, smp)
		if s.start < 0 && strings.Contains(string(log), startLine) {
			s.start = len(s.samples) - 1
		}
		if s.end < 0 && strings.Contains(string(log), endLine) {
			s.end = len(s.samples) - 1
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// window is the pair of samples at the window's edges, and how they were
// found: "log" from HammerDB's lines, else "clock", ramp-up and duration
// from the first sample; nil where no sample falls.
func (s *sampler) window(ramp, duration time.Duration) (from, to *sample, how string) {
	if s.start >= 0 && s.end > s.start {
		return &s.samples[s.start], &s.samples[s.end], "log"
	}
	if len(s.samples) == 0 {
		return nil, nil, "clock"
	}
	first := s.samples[0].at
	return s.at(first.Add(ramp)), s.at(first.Add(ramp + duration)), "clock"
}

// at is the first sample at or after t, nil if none.
func (s *sampler) at(t time.Time) *sample {
	for i := range s.samples {
		if !s.samples[i].at.Before(t) {
			return &s.samples[i]
		}
	}
	return nil
}

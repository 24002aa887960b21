package result

import (
	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/latency"
)

// Sessions is a pooled run's sessions (--connections) over the measured
// window: how many terminals shared how many, how busy they were, and how
// long terminals waited for one, a wait their response times include.
type Sessions struct {
	Terminals int `json:"terminals"`
	Sessions  int `json:"sessions"`
	// InUseMax is the most sessions lent at once, InUseP95 the p95 of
	// those in use, sampled 100 times a second; QueuedMax and QueuedP95
	// are the same of the terminals waiting for one. In a merged run
	// (dbrig merge) each is the sum of its parts' and AllInUse the least
	// of theirs: bounds, since the parts' peaks need not coincide.
	InUseMax  int `json:"in_use_max"`
	InUseP95  int `json:"in_use_p95"`
	QueuedMax int `json:"queued_max"`
	QueuedP95 int `json:"queued_p95"`
	// AllInUse is the share of the samples with every session lent.
	AllInUse float64 `json:"all_in_use"`
	// Wait is the wait for a session of the window's completed
	// transactions; WaitHistogram its HdrHistogram, encoded as a
	// transaction's Histogram is.
	Wait          latency.Latency `json:"wait"`
	WaitHistogram string          `json:"wait_histogram"`
}

// sessions records a pooled run's pool, and the verdict of a pool too
// small as a note.
func (d *Document) sessions(p *driver.Pool) error {
	if p == nil {
		return nil
	}
	var err error
	if d.Sessions, err = sessionsOf(p); err != nil {
		return err
	}
	if v := p.Verdict(); v != "" {
		d.Notes = append(d.Notes, v)
	}
	return nil
}

// sessionsOf is a pool's figures as a document holds them.
func sessionsOf(p *driver.Pool) (*Sessions, error) {
	enc, err := latency.Encode(p.Wait)
	if err != nil {
		return nil, err
	}
	return &Sessions{
		Terminals: p.Terminals, Sessions: p.Sessions, InUseMax: p.InUseMax, InUseP95: p.InUseP95,
		QueuedMax: p.QueuedMax, QueuedP95: p.QueuedP95, AllInUse: p.AllInUse,
		Wait: latency.Summarize(p.Wait), WaitHistogram: enc,
	}, nil
}

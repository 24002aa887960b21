// Package latency holds latency histograms (HdrHistogram, microseconds) and
// their summaries; the per-second series are the driver's.
package latency

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Latencies are recorded in microseconds, up to an hour, at 3 significant
// figures: the resolution the result document promises.
const (
	minMicros = 1
	maxMicros = int64(time.Hour / time.Microsecond)
	sigFigs   = 3
)

// NewHistogram returns an empty latency histogram.
func NewHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(minMicros, maxMicros, sigFigs)
}

// NewSecondHistogram returns an empty histogram for one second's
// latencies: 2 significant figures, a seventh of NewHistogram's size,
// since a run keeps one per virtual user and second's percentiles to 1%
// are all a chart over time shows.
func NewSecondHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(minMicros, maxMicros, 2)
}

// Percentiles are one second's latency percentiles, in milliseconds, and
// its slowest: a transaction held through a stall shows in the second it
// ends as the maximum, where it is too few to move the p99.
type Percentiles struct {
	P50 float64 `json:"p50_ms"`
	P95 float64 `json:"p95_ms"`
	P99 float64 `json:"p99_ms"`
	Max float64 `json:"max_ms"`
}

// PercentilesOf reads h's percentiles; nil when h is empty.
func PercentilesOf(h *hdrhistogram.Histogram) *Percentiles {
	if h.TotalCount() == 0 {
		return nil
	}
	ms := func(q float64) float64 { return float64(h.ValueAtQuantile(q)) / 1000 }
	return &Percentiles{P50: ms(50), P95: ms(95), P99: ms(99), Max: ms(100)}
}

// Record adds one latency; values beyond the range are clamped so that a
// pathological stall still counts.
func Record(h *hdrhistogram.Histogram, d time.Duration) {
	us := d.Microseconds()
	if us < minMicros {
		us = minMicros
	}
	if us > maxMicros {
		us = maxMicros
	}
	h.RecordValue(us) //nolint:errcheck // clamped into range above
}

// Latency is a histogram's summary in milliseconds.
type Latency struct {
	Mean float64 `json:"mean_ms"`
	P50  float64 `json:"p50_ms"`
	P90  float64 `json:"p90_ms"`
	P95  float64 `json:"p95_ms"`
	P99  float64 `json:"p99_ms"`
	Max  float64 `json:"max_ms"`
}

// Summarize reads the percentiles of h.
func Summarize(h *hdrhistogram.Histogram) Latency {
	if h.TotalCount() == 0 {
		return Latency{}
	}
	ms := func(us int64) float64 { return float64(us) / 1000 }
	return Latency{
		Mean: h.Mean() / 1000,
		P50:  ms(h.ValueAtQuantile(50)),
		P90:  ms(h.ValueAtQuantile(90)),
		P95:  ms(h.ValueAtQuantile(95)),
		P99:  ms(h.ValueAtQuantile(99)),
		Max:  ms(h.Max()),
	}
}

// Encode returns the histogram in HdrHistogram's compressed, base64
// interchange form, which other HdrHistogram tools read.
func Encode(h *hdrhistogram.Histogram) (string, error) {
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	return string(b), err
}

// Decode reverses Encode. A histogram of more significant digits than
// dbrig's is refused before its counts are allocated: a document is
// anyone's file, and one of 5 digits over int64's range would take 48 MB
// a histogram, where dbrig's take at most 188 KB.
func Decode(s string) (*hdrhistogram.Histogram, error) {
	digits, err := encodedDigits(s)
	if err != nil {
		return nil, err
	}
	if digits > sigFigs {
		return nil, fmt.Errorf("a histogram of %d significant digits, where dbrig's have at most %d", digits, sigFigs)
	}
	return hdrhistogram.Decode([]byte(s))
}

// encodedDigits reads the significant digits of an encoded histogram from
// its header: base64 of a cookie and a length (4 bytes each), then, zlib
// compressed, a header of a cookie, the payload's length, the normalizing
// index offset and the digits (4 bytes each, big-endian) before the rest.
func encodedDigits(s string) (int32, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return 0, err
	}
	if len(b) < 8 {
		return 0, fmt.Errorf("encoded histogram too short: %d bytes", len(b))
	}
	z, err := zlib.NewReader(bytes.NewReader(b[8:]))
	if err != nil {
		return 0, err
	}
	defer z.Close()
	var head [16]byte
	if _, err := io.ReadFull(z, head[:]); err != nil {
		return 0, fmt.Errorf("encoded histogram's header: %w", err)
	}
	return int32(binary.BigEndian.Uint32(head[12:])), nil
}

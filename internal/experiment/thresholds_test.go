package experiment_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/dbrig/dbrig/internal/experiment"
)

// TestSpecThresholds: a spec's thresholds are read against its workload's
// names and those it runs with, and come back from the sweep document.
func TestSpecThresholds(t *testing.T) {
	s, err := experiment.Parse("s.yaml", []byte(extSpec+"with: {dvd-reports: 1}\nthresholds:\n  - nopm > 50000\n  - 'errors<0.1%'\n  - dvd-reports:category_sales.p99.9<2s\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"nopm>50000", "errors<0.1%", "dvd-reports:category_sales.p99.9<2s"}
	if got := s.ThresholdExprs(); !slices.Equal(got, want) || s.Thresholds[2].Tx != "dvd-reports:category_sales" {
		t.Errorf("thresholds %v (%+v), want %v", got, s.Thresholds, want)
	}
	back, err := experiment.Parse("sweep.json", s.JSON())
	if err != nil {
		t.Fatalf("%v\n%s", err, s.JSON())
	}
	if !slices.Equal(back.ThresholdExprs(), want) || string(back.JSON()) != string(s.JSON()) {
		t.Errorf("round trip: %v\n%s", back.ThresholdExprs(), back.JSON())
	}
	if none, _ := experiment.Parse("s.yaml", []byte(extSpec)); strings.Contains(string(none.JSON()), "thresholds") {
		t.Errorf("a spec without thresholds keeps some: %s", none.JSON())
	}
}

// TestSpecAudit: a spec can have every run audited for durability, and
// then hold the runs to lost_acks; the sweep document's spec keeps both.
func TestSpecAudit(t *testing.T) {
	s, err := experiment.Parse("s.yaml", []byte(extSpec+"run: {duration: 5s, audit_durability: true}\nvary: {vus: [1, 2]}\nthresholds: ['lost_acks<1']\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !s.Audits() || !slices.Equal(s.ThresholdExprs(), []string{"lost_acks<1"}) {
		t.Errorf("audits %v, thresholds %v; want audited, held to lost_acks<1", s.Audits(), s.ThresholdExprs())
	}
	back, err := experiment.Parse("sweep.json", s.JSON())
	if err != nil || !back.Audits() {
		t.Errorf("the sweep document's spec: audits %v, %v\n%s", back != nil && back.Audits(), err, s.JSON())
	}
	for _, spec := range []string{extSpec, extSpec + "run: {audit_durability: false}\n"} {
		if s, err := experiment.Parse("s.yaml", []byte(spec)); err != nil || s.Audits() {
			t.Errorf("%q: audits %v (%v), want none", spec, s != nil && s.Audits(), err)
		}
	}
}

func TestSpecThresholdErrors(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{extSpec + "thresholds: ['nopm>1', 'nopn>1']\n",
			`s.yaml line 4: thresholds: "nopn>1": unknown metric "nopn" (known: nopm, tpm, errors, in_doubt, lost_acks; a metric's one side, such as nopm.client or nopm.db; or TRANSACTION.STAT, such as new_order.p95<5ms)`},
		{extSpec + "thresholds:\n  - new_order.p95<5\n",
			`s.yaml line 5: thresholds: "new_order.p95<5": unknown unit "" for a latency (known: us, ms, s), such as new_order.p95<5ms`},
		{extSpec + "thresholds:\n  - dvd-reports:category_sales.p95<2s\n",
			`s.yaml line 5: thresholds: "dvd-reports:category_sales.p95<2s": unknown transaction "dvd-reports:category_sales" (known: new_order, payment, order_status, delivery, stock_level)`},
		{extSpec + "thresholds: 'nopm>1'\n",
			`s.yaml line 4: thresholds: want a list, such as ['errors<0.1%', 'TYPE.p95<5ms'], got "nopm>1"`},
		{extSpec + "thresholds: [[nopm>1]]\n",
			`s.yaml line 4: thresholds: want a single value, got a list`},
		{extSpec + "thresholds: ['in_doubt<1', 'lost_acks<1']\n",
			`s.yaml line 4: thresholds: "lost_acks<1": lost_acks judges the durability audit: have every run audited with run: {audit_durability: true}`},
		{extSpec + "run: {audit_durability: false}\nthresholds: ['lost_acks<1']\n",
			`s.yaml line 5: thresholds: "lost_acks<1": lost_acks judges the durability audit: have every run audited with run: {audit_durability: true}`},
	} {
		_, err := experiment.Parse("s.yaml", []byte(tc.yaml))
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: error\n  %v\nwant\n  %s", tc.yaml, err, tc.want)
		}
	}
}

//go:build unix

package servertest

import (
	"context"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/server"
)

// StartCluster makes and starts the cluster c, a test's own, stopped
// when the test ends; tag prefixes what fails ("pgtest").
func StartCluster(tb testing.TB, tag string, c server.Cluster) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := c.Init(ctx); err != nil {
		tb.Fatalf("%s: a cluster of %s: %v", tag, c.Topology(), err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := c.Stop(ctx); err != nil {
			tb.Errorf("%s: stopping the cluster: %v", tag, err)
		}
	})
	if err := c.Start(ctx, nil); err != nil {
		tb.Fatalf("%s: starting a cluster of %s: %v", tag, c.Topology(), err)
	}
}

// AttachesRunning checks that another process finds the running cluster
// c in dir as it is: a cluster of its topology, running.
func AttachesRunning(tb testing.TB, dir string, c server.Cluster) {
	tb.Helper()
	other, err := server.AttachDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	if oc, ok := other.(server.Cluster); !ok || !other.Running() || oc.Topology() != c.Topology() {
		tb.Fatalf("AttachDir found %T running %v", other, other.Running())
	}
}

package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/server"
)

// ClusterActions are the changes of primary that o asks of the run's
// cluster s: a failover at FailoverAt, a switchover at SwitchoverAt.
// Each names the node that is primary after it. s that is not a cluster
// refuses them in one line; none asked, none made.
func ClusterActions(s server.Server, o Options, where string) ([]driver.Action, error) {
	if o.FailoverAt == 0 && o.SwitchoverAt == 0 {
		return nil, nil
	}
	c, ok := s.(server.Cluster)
	if !ok {
		return nil, exitcode.Userf("failover_at and switchover_at need a cluster, and %s is a server of its own: make one with --replicas N", where)
	}
	var actions []driver.Action
	if o.FailoverAt > 0 {
		actions = append(actions, handOver(o.FailoverAt, "failover", c.Failover))
	}
	if o.SwitchoverAt > 0 {
		actions = append(actions, handOver(o.SwitchoverAt, "switchover", c.Switchover))
	}
	return actions, nil
}

// handOver is the action that changes a cluster's primary with change
// at at, and names the node that is primary after it.
func handOver(at time.Duration, what string, change func(context.Context, func(string)) (server.Node, error)) driver.Action {
	return driver.Action{At: at, Outage: true, Do: func(ctx context.Context, note func(string)) error {
		began := time.Now()
		n, err := change(ctx, note)
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		note(fmt.Sprintf("new primary %s (%s, timeline %d), %.1f s after the %s began", n.Name, n.Addr, n.Timeline, time.Since(began).Seconds(), what))
		return nil
	}}
}

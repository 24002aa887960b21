//go:build unix

package mariadb

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/dbrig/dbrig/internal/exitcode"
)

// TestMemberArgs: a node's start names the cluster and its own ports on
// loopback, a user's provider options come after dbrig's, and only the
// bootstrap founds the cluster.
func TestMemberArgs(t *testing.T) {
	m := &member{name: "node2", cluster: "dbrig-x", group: 4002, ist: 5002, sst: 6002, peers: []int{4001, 4002, 4003}, provider: "/p.so"}
	args := m.args(map[string]string{"wsrep-provider-options": "gcs.fc_limit=64"})
	for _, want := range []string{
		"--wsrep_cluster_address=gcomm://127.0.0.1:4001,127.0.0.1:4002,127.0.0.1:4003",
		"--wsrep_provider_options=gmcast.listen_addr=tcp://127.0.0.1:4002;ist.recv_addr=127.0.0.1:5002;gcs.fc_limit=64",
		"--wsrep_sst_receive_address=127.0.0.1:6002",
		"--wsrep_node_name=node2", "--wsrep_cluster_name=dbrig-x", "--wsrep_provider=/p.so",
	} {
		if !slices.Contains(args, want) {
			t.Errorf("args %q lack %s", args, want)
		}
	}
	if slices.Contains(args, "--wsrep-new-cluster") {
		t.Error("a joining node's start founds a cluster")
	}
	m.bootstrap = true
	if !slices.Contains(m.args(nil), "--wsrep-new-cluster") {
		t.Error("the bootstrap's start does not found the cluster")
	}
	if !m.merges("WSREP_PROVIDER_OPTIONS") || !m.owns("wsrep_cluster_address") || m.owns("wsrep_slave_threads") {
		t.Error("owned or merged settings misnamed")
	}
	var single *member
	if single.args(nil) != nil || single.owns("wsrep_on") || single.check(map[string]string{providerOptions: "gmcast.listen_addr=x"}) != nil {
		t.Error("a server of its own is treated as a node")
	}
	var ue *exitcode.UserError
	err := m.check(map[string]string{providerOptions: "gcs.fc_limit=64; IST.recv_addr=127.0.0.1:1"})
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "dbrig sets ist.recv_addr itself") {
		t.Errorf("a user's ist.recv_addr: %v, want it refused", err)
	}
}

// TestPickBootstrap: the node Galera deems safe founds the cluster as it
// is; else the one that holds the most, asking InnoDB only of the nodes
// whose grastate does not say, and then marked safe; the recorded node
// wins a tie; before any start, node1.
func TestPickBootstrap(t *testing.T) {
	safe := grastate{found: true, seqno: 7, safe: true}
	at := func(n int64) grastate { return grastate{found: true, seqno: n} }
	none := grastate{seqno: -1}
	for _, c := range []struct {
		name      string
		states    []grastate
		recorded  int
		recovered map[int]int64
		want      int
		mark      bool
	}{
		{"first start", []grastate{none, none, none}, -1, nil, 0, false},
		{"clean stop", []grastate{at(5), at(6), safe}, 0, nil, 2, false},
		{"two safe, the recorded", []grastate{safe, safe}, 1, nil, 1, false},
		{"highest seqno", []grastate{at(5), at(9), at(6)}, 0, nil, 1, true},
		{"a tie, the recorded", []grastate{at(9), at(9), at(9)}, 2, nil, 2, true},
		{"all crashed", []grastate{at(-1), at(-1), at(-1)}, 0, map[int]int64{0: 11, 1: 12, 2: 11}, 1, true},
		{"a joiner never synced", []grastate{at(-1), none, at(4)}, -1, map[int]int64{0: 3}, 2, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			asked := map[int]bool{}
			i, mark, err := pickBootstrap(c.states, c.recorded, func(i int) (int64, error) {
				asked[i] = true
				if at, ok := c.recovered[i]; ok {
					return at, nil
				}
				return 0, fmt.Errorf("node %d asked", i)
			})
			if err != nil || i != c.want || mark != c.mark {
				t.Errorf("node %d, mark %v, %v; want node %d, mark %v", i, mark, err, c.want, c.mark)
			}
			if len(asked) != len(c.recovered) {
				t.Errorf("asked InnoDB of %v, want of %v", asked, c.recovered)
			}
		})
	}
}

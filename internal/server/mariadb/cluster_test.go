package mariadb_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/server"
	"github.com/dbrig/dbrig/internal/server/mariadb"
	"github.com/dbrig/dbrig/internal/server/mariadb/mariatest"
	"github.com/dbrig/dbrig/internal/server/servertest"
)

// members is each node's view as Nodes reports it:
// "node1=member/Primary/3/Synced node2=down/lost".
func members(t *testing.T, ctx context.Context, c *mariadb.Cluster) string {
	t.Helper()
	nodes, err := c.Nodes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range nodes {
		v := n.Name + "=" + n.Role
		if n.Role == server.RoleMember {
			v += fmt.Sprintf("/%s/%d/%s", n.ClusterStatus, n.ClusterSize, n.State)
			if !n.Ready {
				v += "/not-ready"
			}
		} else {
			v += "/" + n.State
		}
		out = append(out, v)
	}
	return strings.Join(out, " ")
}

// awaitMembers waits until the nodes' views read want; a node that
// left is seen gone only once the others' suspicion of it has run out.
func awaitMembers(t *testing.T, ctx context.Context, c *mariadb.Cluster, want string) {
	t.Helper()
	deadline := time.Now().Add(45 * time.Second)
	for {
		got := members(t, ctx, c)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("nodes %s, want %s", got, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// session is a session on the node at url, closed when the test ends.
func session(t *testing.T, ctx context.Context, url string) dbtarget.Session {
	t.Helper()
	tg, err := dbtarget.OpenExisting(ctx, url)
	if err != nil {
		t.Fatalf("open %s: %v", dbtarget.Redact(url), err)
	}
	t.Cleanup(func() { tg.Close() })
	s, err := tg.Session(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// execOn runs stmt on the node at url.
func execOn(t *testing.T, ctx context.Context, url, stmt string) {
	t.Helper()
	if _, err := session(t, ctx, url).Exec(ctx, stmt); err != nil {
		t.Fatalf("%s on %s: %v", stmt, dbtarget.Redact(url), err)
	}
}

// awaitSum waits until the node at url reads want as the sum of
// galera.t's rows: a node applies the others' commits soon after they
// return, not before.
func awaitSum(t *testing.T, ctx context.Context, url string, want int) {
	t.Helper()
	s := session(t, ctx, url)
	deadline := time.Now().Add(10 * time.Second)
	for {
		var got int
		err := s.QueryRow(ctx, "SELECT coalesce(sum(i), 0) FROM galera.t").Scan(&got)
		if err == nil && got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s reads %d (%v) as the sum of galera.t, want %d", dbtarget.Redact(url), got, err, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestGaleraCluster: three nodes start as one cluster, each seeing all
// three, Primary and ready; what one takes the others have; a node lost
// leaves the others Primary and taking writes; a stop and a start bring
// all three back, the lost one taking what it missed; and so does a
// start after every node was lost, founding the cluster from the one
// InnoDB finds holds the most.
func TestGaleraCluster(t *testing.T) {
	began := time.Now()
	c := mariatest.NewCluster(t, 3)
	t.Logf("3 nodes started in %.1f s", time.Since(began).Seconds())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c.SetProgress(func(what string) { t.Logf("%5.1f s  %s", time.Since(began).Seconds(), what) })
	const all = "node1=member/Primary/3/Synced node2=member/Primary/3/Synced node3=member/Primary/3/Synced"
	if got := members(t, ctx, c); got != all {
		t.Fatalf("nodes after start: %s", got)
	}
	st, err := c.Status(ctx)
	if err != nil || st.State != server.Running || len(st.Nodes) != 3 {
		t.Fatalf("status %+v, %v", st, err)
	}
	secret, err := os.ReadFile(c.Dir() + "/dbrig-secret")
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(c.Dir() + "/dbrig-secret"); fi.Mode().Perm() != 0o600 {
		t.Errorf("dbrig-secret mode %04o, want 0600", fi.Mode().Perm())
	}
	if u := c.URLFor("galera"); strings.Count(u, ",127.0.0.1:") != 2 || !strings.Contains(u, "passfile=") || strings.Contains(u, strings.TrimSpace(string(secret))) {
		t.Errorf("the cluster's URL %s does not name every node and the password file alone", u)
	}
	if err := c.CreateDB(ctx, "galera"); err != nil {
		t.Fatal(err)
	}
	node1, node2, node3 := st.Nodes[0], st.Nodes[1], st.Nodes[2]
	execOn(t, ctx, node1, "CREATE TABLE galera.t (i int PRIMARY KEY)")
	execOn(t, ctx, node1, "INSERT INTO galera.t VALUES (1)")
	awaitSum(t, ctx, node3, 1)

	var ue *exitcode.UserError
	if _, err := c.Failover(ctx, func(string) {}); !errors.As(err, &ue) || !strings.Contains(err.Error(), "--kill-node-at") {
		t.Errorf("Failover: %v, want a refusal that names --kill-node-at", err)
	}
	if _, err := c.KillNode(ctx, "node4"); !errors.As(err, &ue) {
		t.Errorf("KillNode of no node: %v, want a refusal", err)
	}

	n, err := c.KillNode(ctx, "node2")
	if err != nil {
		t.Fatalf("KillNode: %v", err)
	}
	if n.Name != "node2" || n.Role != server.RoleDown || n.State != "lost" {
		t.Fatalf("KillNode returned %+v, want node2 down and lost", n)
	}
	lost := time.Now()
	awaitMembers(t, ctx, c, "node1=member/Primary/2/Synced node2=down/lost node3=member/Primary/2/Synced")
	t.Logf("the others saw node2 gone %.1f s after the kill", time.Since(lost).Seconds())
	execOn(t, ctx, node1, "INSERT INTO galera.t VALUES (2)")
	awaitSum(t, ctx, node3, 3)

	// Another process finds it as it is.
	servertest.AttachesRunning(t, c.Dir(), c)

	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if out, _ := exec.Command("pgrep", "-f", "mariadbd .*--datadir="+c.Dir()).Output(); len(out) > 0 {
		t.Fatalf("mariadbd left after Stop: %s", out)
	}
	if got := members(t, ctx, c); got != "node1=down/stopped node2=down/lost node3=down/stopped" {
		t.Errorf("nodes after stop: %s", got)
	}
	began = time.Now()
	if err := c.Start(ctx, nil); err != nil {
		t.Fatalf("Start after a stop: %v", err)
	}
	t.Logf("started again in %.1f s", time.Since(began).Seconds())
	if got := members(t, ctx, c); got != all {
		t.Fatalf("nodes after the restart: %s", got)
	}
	awaitSum(t, ctx, node2, 3)

	// Every node lost: none stopped last, so the one that holds the most
	// is found by asking InnoDB.
	execOn(t, ctx, node3, "INSERT INTO galera.t VALUES (4)")
	for _, name := range []string{"node1", "node2", "node3"} {
		if _, err := c.KillNode(ctx, name); err != nil {
			t.Fatalf("KillNode(%s): %v", name, err)
		}
	}
	if c.Running() {
		t.Error("running with every node lost")
	}
	began = time.Now()
	if err := c.Start(ctx, map[string]string{"wsrep_provider_options": "gcs.fc_limit=64"}); err != nil {
		t.Fatalf("Start after every node was lost: %v", err)
	}
	t.Logf("started again after every node was lost in %.1f s", time.Since(began).Seconds())
	if got := members(t, ctx, c); got != all {
		t.Fatalf("nodes after every node was lost: %s", got)
	}
	awaitSum(t, ctx, node1, 7)
	var opts string
	if err := session(t, ctx, node2).QueryRow(ctx, "SELECT @@wsrep_provider_options").Scan(&opts); err != nil || !strings.Contains(opts, "gcs.fc_limit = 64") {
		t.Errorf("wsrep_provider_options %q (%v), want the user's gcs.fc_limit", opts, err)
	}
}

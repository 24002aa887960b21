//go:build unix

package mariadb

import (
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/dbrig/dbrig/internal/exitcode"
)

// member is what a node of a Galera cluster has that a server of its own
// has not: its place in the group, which every start of it passes to
// mariadbd before the user's settings. A nil member is a server of its
// own.
type member struct {
	// name is the node's wsrep_node_name, and its directory's; cluster
	// is wsrep_cluster_name, which a node reaching another cluster's
	// port is refused by.
	name, cluster string
	// group, ist and sst are the node's loopback ports for the group's
	// own traffic (gmcast), for the incremental state transfers it
	// receives and for the whole ones (rsync's daemon); peers are every
	// node's group port, its own too, as the cluster's address.
	group, ist, sst int
	peers           []int
	// secret is the cluster's password file, the same for every node: a
	// state transfer copies the donor's accounts with its data.
	secret string
	// join says that Init leaves the node's data directory empty: its
	// first start takes all of it from a node of the cluster.
	join bool
	// provider is Galera's library; bootstrap makes the next start found
	// the cluster (--wsrep-new-cluster) instead of joining it.
	provider  string
	bootstrap bool
}

// memberOwned are the settings a node's start sets itself: where it
// finds the others and listens for them, and what Galera replicates by
// (InnoDB's row events, auto-increments interleaved across nodes); a
// sweep that changed them would measure a cluster that does not form or
// does not replicate.
var memberOwned = map[string]bool{
	"wsrep_on": true, "wsrep_provider": true, "wsrep_cluster_name": true,
	"wsrep_cluster_address": true, "wsrep_node_address": true, "wsrep_node_name": true,
	"wsrep_sst_receive_address": true, "wsrep_sst_method": true, "wsrep_new_cluster": true,
	"wsrep_recover": true, "binlog_format": true, "default_storage_engine": true,
	"innodb_autoinc_lock_mode": true,
}

// providerOwned are the provider's options the node sets itself, in
// wsrep_provider_options, which a user's may add to but not change.
var providerOwned = []string{"gmcast.listen_addr", "ist.recv_addr"}

// providerOptions is the setting a user's provider options are merged
// into rather than passed as they are.
const providerOptions = "wsrep_provider_options"

func (m *member) joiner() bool { return m != nil && m.join }

// owns tells the settings, by normalName, that the node sets itself.
func (m *member) owns(name string) bool { return m != nil && memberOwned[name] }

// merges tells the setting that args gives merged with the node's own.
func (m *member) merges(name string) bool { return m != nil && normalName(name) == providerOptions }

// startLimit bounds the wait for a start to accept connections: a node
// joining a cluster takes a state transfer first, the whole of the
// donor's data at its first start, which rsync copies at the disk's
// pace.
func (m *member) startLimit() time.Duration {
	if m == nil {
		return 2 * time.Minute
	}
	return 30 * time.Minute
}

// loopback is a port on 127.0.0.1, where every node listens.
func loopback(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

// check refuses a user's provider options that would move the node's
// listening addresses.
func (m *member) check(settings map[string]string) error {
	if m == nil {
		return nil
	}
	for _, opt := range strings.Split(userProviderOptions(settings), ";") {
		key, _, _ := strings.Cut(opt, "=")
		for _, owned := range providerOwned {
			if strings.EqualFold(strings.TrimSpace(key), owned) {
				return exitcode.Userf("--set %s=%s: dbrig sets %s itself, where the other nodes find this one", providerOptions, userProviderOptions(settings), owned)
			}
		}
	}
	return nil
}

// userProviderOptions is the user's wsrep_provider_options, "" unset.
func userProviderOptions(settings map[string]string) string {
	for name, v := range settings {
		if normalName(name) == providerOptions {
			return v
		}
	}
	return ""
}

// args are the node's place in its cluster as mariadbd's arguments,
// with the user's provider options (gcs.fc_limit, ...) after its own.
func (m *member) args(settings map[string]string) []string {
	if m == nil {
		return nil
	}
	peers := make([]string, len(m.peers))
	for i, p := range m.peers {
		peers[i] = loopback(p)
	}
	opts := "gmcast.listen_addr=tcp://" + loopback(m.group) + ";ist.recv_addr=" + loopback(m.ist)
	if user := userProviderOptions(settings); user != "" {
		opts += ";" + user
	}
	args := []string{
		"--binlog_format=ROW",
		"--default_storage_engine=InnoDB",
		"--innodb_autoinc_lock_mode=2",
		"--wsrep_on=ON",
		"--wsrep_provider=" + m.provider,
		"--wsrep_cluster_name=" + m.cluster,
		"--wsrep_cluster_address=gcomm://" + strings.Join(peers, ","),
		"--wsrep_node_address=127.0.0.1",
		"--wsrep_node_name=" + m.name,
		"--" + providerOptions + "=" + opts,
		"--wsrep_sst_receive_address=" + loopback(m.sst),
		"--wsrep_sst_method=rsync",
	}
	if m.bootstrap {
		args = append(args, "--wsrep-new-cluster")
	}
	return args
}

// providerPaths are where distributions put Galera 4's provider:
// Debian's and Ubuntu's galera-4, then Red Hat's.
var providerPaths = []string{"/usr/lib/galera/libgalera_smm.so", "/usr/lib64/galera-4/libgalera_smm.so", "/usr/lib64/galera/libgalera_smm.so"}

// ClusterTools says, in one line, what this host lacks for a Galera
// cluster's nodes, nil when it has it all: Galera's provider, and rsync,
// by which a joining node takes its data, with a tool that lists
// listening sockets (ss, lsof or sockstat), by which rsync's script waits
// for its daemon.
func ClusterTools() error {
	_, err := findProvider()
	return err
}

// findProvider is Galera's provider, once ClusterTools has what it needs.
func findProvider() (string, error) {
	var missing []string
	provider := ""
	for _, p := range providerPaths {
		if _, err := os.Stat(p); err == nil {
			provider = p
			break
		}
	}
	if provider == "" {
		missing = append(missing, "Galera's provider ("+providerPaths[0]+")")
	}
	if _, err := exec.LookPath("rsync"); err != nil {
		missing = append(missing, "rsync")
	}
	if !onPath("ss", "lsof", "sockstat") {
		missing = append(missing, "ss")
	}
	if len(missing) > 0 {
		return "", exitcode.Userf("a MariaDB cluster (--nodes) needs %s, not found here (Debian: apt-get install galera-4 rsync iproute2)", strings.Join(missing, " and "))
	}
	return provider, nil
}

// onPath says whether any of names is on PATH.
func onPath(names ...string) bool {
	for _, n := range names {
		if _, err := exec.LookPath(n); err == nil {
			return true
		}
	}
	return false
}

package report

import "testing"

func TestMarkLabel(t *testing.T) {
	for what, want := range map[string]string{
		"node1 lost: SIGKILL to its Patroni (pid 1) and its postmaster (pid 2)":            "node1 lost",
		"node3 promoted by Patroni, 29.2 s after the loss (ttl 30s, loop_wait 10s)":        "node3 promoted by Patroni",
		"new primary node3 (127.0.0.1:37667, timeline 2), 29.2 s after the failover began": "new primary node3",
		"server killed (SIGKILL to pid 7)":                                                 "server killed",
		"server up again, 3.6 s after the kill":                                            "server up again",
		"checkpoint":                                                                       "checkpoint",
	} {
		if got := markLabel(what); got != want {
			t.Errorf("markLabel(%q) = %q, want %q", what, got, want)
		}
	}
}

package cli

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/dbrig/dbrig/internal/dbtarget"
)

// targetValue is --target: one URL, or, given again, the nodes of one
// cluster, each URL alike but for its HOST:PORT, joined into one URL of
// several hosts (what a multi-host URL names: the nodes a run spreads its
// virtual users over, or those a PostgreSQL client tries in turn).
type targetValue struct {
	url *string
	set bool
}

func (v *targetValue) String() string {
	if v.url == nil {
		return ""
	}
	return *v.url
}

func (v *targetValue) Type() string { return "string" }

func (v *targetValue) Set(s string) error {
	if !v.set {
		*v.url, v.set = s, true
		return nil
	}
	joined, err := joinHosts(*v.url, s)
	if err != nil {
		return err
	}
	*v.url = joined
	return nil
}

// joinHosts is first with next's hosts added, where the two URLs name the
// same database the same way on other hosts.
func joinHosts(first, next string) (string, error) {
	a, errA := url.Parse(first)
	b, errB := url.Parse(next)
	if errA != nil || errB != nil || a.Host == "" || b.Host == "" ||
		a.Scheme != b.Scheme || a.User.String() != b.User.String() || a.Path != b.Path || a.RawQuery != b.RawQuery {
		return "", fmt.Errorf("%s and %s: several --target flags are the nodes of one cluster, URLs alike but for their HOST:PORT (or give one URL of several hosts, HOST1:PORT1,HOST2:PORT2)",
			dbtarget.Redact(first), dbtarget.Redact(next))
	}
	for h := range strings.SplitSeq(b.Host, ",") {
		if !strings.Contains(","+a.Host+",", ","+h+",") {
			a.Host += "," + h
		}
	}
	return a.String(), nil
}

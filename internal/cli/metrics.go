package cli

import (
	"fmt"
	"io"

	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/exporter"
	"github.com/spf13/pflag"
)

// metricsExample shows --metrics-addr in a command's examples.
const metricsExample = "--metrics-addr :9187   # Prometheus scrapes http://127.0.0.1:9187/metrics while it runs"

func addMetricsFlag(fs *pflag.FlagSet, addr *string) {
	fs.StringVar(addr, "metrics-addr", "", "serve live Prometheus metrics on HOST:PORT/metrics while running (:PORT means 127.0.0.1:PORT)")
}

// serveMetrics binds addr, when the user gave one, before anything runs:
// a port in use is then one line and nothing lost. The server is nil
// without an address.
func serveMetrics(addr string, stderr io.Writer) (*exporter.Server, error) {
	if addr == "" {
		return nil, nil
	}
	s, err := exporter.Listen(addr)
	if err != nil {
		return nil, exitcode.Userf("--metrics-addr: %v", err)
	}
	fmt.Fprintf(stderr, "Serving live metrics on http://%s/metrics\n", s.Addr())
	return s, nil
}

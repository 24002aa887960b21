package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/human"
	"github.com/dbrig/dbrig/internal/web"
	"github.com/spf13/cobra"
)

func newServe() *cobra.Command {
	var cat catalogFlags
	var addr, token, tokenFile string
	var maxUpload string
	c := &cobra.Command{
		Use:   "serve",
		Short: "Serve the results catalogue: a web UI and a REST API",
		Long: `Serves the results catalogue over HTTP until Ctrl-C: a web UI at / (the
runs, filtered by workload, target, tag and config keys; each run's HTML
report; a metric's history with each run's interval and the change points;
runs side by side) and a REST API under /api/:

  GET  /api/runs?workload=&target=&tag=&where=&since=&limit=   the runs, newest first
  GET  /api/runs/ID                   one entry; /api/runs/ID/document its document
  POST /api/runs?tag=&commit=         catalogue a document made elsewhere (application/json)
  GET  /api/history?metric=&by=&...   a metric over time, with change points
  GET  /api/regress?metric=&baseline=&run=&...   the regression test of dbrig regress
  GET  /api/compare?id=A&id=B...      runs side by side
  GET  /runs/ID/report                the run's HTML report

It listens on loopback unless --addr says otherwise, and then only with a
token (--token, or --token-file, whose first line is the token), which
every request must send as Authorization: Bearer TOKEN (the UI asks for it
once and keeps it in a cookie). Uploads past --max-upload, or that are no
result document, are refused.`,
		Example: "  dbrig serve                                   # http://127.0.0.1:8080/\n" +
			"  dbrig serve --catalog postgres://bench@perfdb/catalog --addr 0.0.0.0:8080 --token-file /etc/dbrig/token\n" +
			"  curl -H 'Authorization: Bearer TOKEN' -H 'Content-Type: application/json' --data-binary @run.json http://perf:8080/api/runs?tag=nightly",
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			tok, err := serveToken(token, tokenFile)
			if err != nil {
				return err
			}
			limit, err := human.ParseSize(maxUpload)
			if err != nil || limit <= 0 {
				return exitcode.Userf("--max-upload %q: want a size such as 64MB", maxUpload)
			}
			ln, err := listen(addr, tok != "")
			if err != nil {
				return err
			}
			defer ln.Close()
			cg, err := cat.open(c.Context())
			if err != nil {
				return err
			}
			defer cg.Close()
			srv := &http.Server{Handler: web.Handler(web.Options{Catalog: cg, Token: tok, MaxUpload: limit}), ReadHeaderTimeout: 10 * time.Second}
			stopped := make(chan struct{})
			var once sync.Once
			stop := func(os.Signal) {
				once.Do(func() {
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
					defer cancel()
					srv.Shutdown(ctx)
					close(stopped)
				})
			}
			defer onSignals(c.ErrOrStderr(), stop, stop, stop)()
			fmt.Fprintf(c.OutOrStdout(), "Serving %s at http://%s/ (Ctrl-C stops)\n", cg.Name(), ln.Addr())
			if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			<-stopped
			return nil
		},
	}
	addCatalogFlag(c.Flags(), &cat)
	c.Flags().StringVar(&addr, "addr", "127.0.0.1:8080", "where to listen; anything but loopback needs --token")
	c.Flags().StringVar(&token, "token", "", "a token every request must send (Authorization: Bearer TOKEN); visible to other local users in the process list: prefer --token-file")
	c.Flags().StringVar(&tokenFile, "token-file", "", "a file whose first line is the token")
	c.Flags().StringVar(&maxUpload, "max-upload", human.FormatSize(web.DefaultMaxUpload), "the largest document POST /api/runs takes")
	return c
}

func serveToken(token, file string) (string, error) {
	switch {
	case token != "" && file != "":
		return "", exitcode.Userf("--token and --token-file: give one")
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return "", exitcode.Userf("--token-file: %v", unwrapPath(err))
		}
		token, _, _ = strings.Cut(string(b), "\n")
		if token = strings.TrimSpace(token); token == "" {
			return "", exitcode.Userf("--token-file %s: its first line is empty", file)
		}
	}
	if token != "" && len(token) < 16 {
		return "", exitcode.Userf("the token is %d characters: give one of 16 or more (openssl rand -hex 16)", len(token))
	}
	return token, nil
}

// listen binds addr, refusing an address other machines can reach
// without a token: the catalogue holds every run's figures, and its API
// writes.
func listen(addr string, token bool) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, exitcode.Userf("--addr %q: want HOST:PORT, such as 127.0.0.1:8080", addr)
	}
	if !token {
		ip := net.ParseIP(strings.Trim(host, "[]"))
		if host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return nil, exitcode.Userf("--addr %s can be reached from other machines: give it --token-file (or --token), or listen on 127.0.0.1", addr)
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, exitcode.Userf("--addr %s: %v", addr, human.OneLine(err))
	}
	return ln, nil
}

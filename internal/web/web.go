// Package web is dbrig serve: the results catalogue over HTTP, a REST API
// under /api/ and a web UI at / (the runs with filters, each run's HTML
// report, a metric's history with its intervals and change points, and
// runs side by side).
package web

import (
	"crypto/subtle"
	"embed"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/dbrig/dbrig/internal/catalog"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/report"
)

// DefaultMaxUpload is the largest document POST /api/runs takes unless
// told otherwise: a long run with its telemetry, not a day's.
const DefaultMaxUpload = 64 << 20

// Options are what a server serves and how it is guarded.
type Options struct {
	Catalog *catalog.Catalog
	// Token, where set, is asked of every request, as Authorization:
	// Bearer TOKEN or the cookie the login page sets.
	Token string
	// MaxUpload bounds an ingested document's size; 0 is DefaultMaxUpload.
	MaxUpload int64
	// Now is the clock the filters' ages count back from; nil is the
	// wall clock.
	Now func() time.Time
}

//go:embed ui
var ui embed.FS

const cookieName = "dbrig_token"

// Handler serves the API and the UI.
func Handler(o Options) http.Handler {
	if o.MaxUpload <= 0 {
		o.MaxUpload = DefaultMaxUpload
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	s := &server{o: o}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.asset("ui/index.html", "text/html; charset=utf-8"))
	mux.HandleFunc("GET /assets/app.js", s.asset("ui/app.js", "text/javascript; charset=utf-8"))
	mux.HandleFunc("GET /assets/app.css", s.asset("ui/app.css", "text/css; charset=utf-8"))
	chart, bars := report.ChartScripts()
	mux.HandleFunc("GET /assets/chart.js", script(chart))
	mux.HandleFunc("GET /assets/errorbars.js", script(bars))
	mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	mux.HandleFunc("GET /login", s.asset("ui/login.html", "text/html; charset=utf-8"))
	mux.HandleFunc("POST /login", s.login)
	mux.HandleFunc("GET /api/runs", s.runs)
	mux.HandleFunc("POST /api/runs", s.ingest)
	mux.HandleFunc("GET /api/runs/{id}", s.run)
	mux.HandleFunc("GET /api/runs/{id}/document", s.document)
	mux.HandleFunc("GET /runs/{id}/report", s.report)
	mux.HandleFunc("GET /api/history", s.history)
	mux.HandleFunc("GET /api/regress", s.regress)
	mux.HandleFunc("GET /api/compare", s.compare)
	mux.HandleFunc("GET /api/fields", s.fields)
	return s.guard(mux)
}

type server struct{ o Options }

// guard asks for the token where there is one, and keeps a page of
// another origin from driving the API: a write must say it sends JSON
// (which a form of another site cannot without the browser asking
// first) and, where the browser names its origin, come from this one;
// without a token the server answers only to a loopback host name, so
// that a name rebound to 127.0.0.1 by another site's DNS reads nothing.
func (s *server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "no-referrer")
		w.Header().Set("X-Frame-Options", "SAMEORIGIN")
		if s.o.Token == "" && !loopbackHost(r.Host) {
			fail(w, http.StatusForbidden, "this server answers to localhost only; give it --token to serve other names")
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if o := r.Header.Get("Origin"); o != "" && o != "http://"+r.Host && o != "https://"+r.Host {
				fail(w, http.StatusForbidden, "a request from another origin")
				return
			}
		}
		open := r.URL.Path == "/login" || strings.HasPrefix(r.URL.Path, "/assets/app.css")
		if s.o.Token != "" && !open && !s.authorized(r) {
			if strings.HasPrefix(r.URL.Path, "/api/") {
				w.Header().Set("WWW-Authenticate", `Bearer realm="dbrig"`)
				fail(w, http.StatusUnauthorized, "send Authorization: Bearer TOKEN, the token dbrig serve was given")
				return
			}
			http.Redirect(w, r, "/login", http.StatusSeeOther)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *server) authorized(r *http.Request) bool {
	got := ""
	if h := r.Header.Get("Authorization"); strings.HasPrefix(h, "Bearer ") {
		got = strings.TrimPrefix(h, "Bearer ")
	} else if c, err := r.Cookie(cookieName); err == nil {
		got = c.Value
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(s.o.Token)) == 1
}

// login takes the token from its form into a cookie the browser sends
// back to this server only, and no script can read.
func (s *server) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	if s.o.Token == "" {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	if subtle.ConstantTimeCompare([]byte(r.PostFormValue("token")), []byte(s.o.Token)) != 1 {
		w.WriteHeader(http.StatusUnauthorized)
		b, _ := ui.ReadFile("ui/login.html")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(b)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: s.o.Token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

func loopbackHost(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	host = strings.Trim(host, "[]")
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// uiCSP keeps the UI's pages to their own scripts: everything they show
// of a document goes in as text, and this stops a script that slipped in
// as markup anyway.
const uiCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'self'; base-uri 'none'"

func (s *server) asset(name, ctype string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		b, err := ui.ReadFile(name)
		if err != nil {
			fail(w, http.StatusNotFound, "no such page")
			return
		}
		w.Header().Set("Content-Type", ctype)
		w.Header().Set("Content-Security-Policy", uiCSP)
		w.Header().Set("Cache-Control", "no-cache")
		w.Write(b)
	}
}

func script(src string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		w.Header().Set("Cache-Control", "max-age=3600")
		w.Write([]byte(src))
	}
}

// reply writes v as JSON.
func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(true)
	enc.Encode(v)
}

func fail(w http.ResponseWriter, status int, msg string) {
	reply(w, status, map[string]string{"error": msg})
}

// failErr answers err: what the user can change is 400 (404 for a run
// that is not there), the catalogue failing 500.
func failErr(w http.ResponseWriter, err error) {
	var ue *exitcode.UserError
	switch {
	case errors.Is(err, catalog.ErrStore):
		fail(w, http.StatusInternalServerError, err.Error())
	case errors.As(err, new(catalog.ErrNotFound)):
		fail(w, http.StatusNotFound, err.Error())
	case errors.As(err, &ue):
		fail(w, http.StatusBadRequest, ue.Msg)
	default:
		fail(w, http.StatusBadRequest, err.Error())
	}
}

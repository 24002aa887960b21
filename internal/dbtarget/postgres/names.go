package postgres

import "github.com/dbrig/dbrig/internal/dbtarget"

var _ dbtarget.SessionNamer = (*Target)(nil)

// NameSessions sets the application_name of the sessions the target opens
// from now on, in place of any the URL gave: the telemetry tells the run's
// sessions from other clients' by it (telemetry_sessions.go).
func (t *Target) NameSessions(name string) {
	if t.cfg.RuntimeParams == nil {
		t.cfg.RuntimeParams = map[string]string{}
	}
	t.cfg.RuntimeParams["application_name"] = name
	t.name = name
}

// other says a client backend named app, as pg_stat_activity shows it, is
// another client's than the run's.
func (t *Target) other(app string) bool { return app != t.name }

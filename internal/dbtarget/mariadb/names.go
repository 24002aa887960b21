package mariadb

import (
	"context"
	"database/sql/driver"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/dbrig/dbrig/internal/dbtarget"
)

var _ dbtarget.SessionNamer = (*Target)(nil)

// NameSessions sets the program_name connection attribute of the
// connections the target opens from now on, where performance_schema
// shows it (session_connect_attrs), and opens its pool again so that
// every one has it. A run in parts shares the name: its parts' sessions
// are then told from other clients' only by it, and where
// performance_schema is off they cannot be (telemetry_sessions.go).
func (t *Target) NameSessions(name string) {
	t.nameSessions(name, true)
	if db, err := t.open(t.cfg); err == nil {
		old := t.db.SQL
		t.db.SQL = db
		old.Close()
		t.closePeers()
		if t.openPeers() != nil {
			t.nodes.addrs = t.nodes.addrs[:1]
		}
	}
}

// nameSessions sets the name and whether other processes share it. A
// connection attribute's name and value cannot hold the list's ',' or
// ':', which become '?', as every part of a run makes them alike.
func (t *Target) nameSessions(name string, shared bool) {
	name = strings.Map(func(r rune) rune {
		if r == ',' || r == ':' {
			return '?'
		}
		return r
	}, name)
	t.name, t.shared = name, shared
	var attrs []string
	for a := range strings.SplitSeq(t.attrs, ",") {
		if k, _, _ := strings.Cut(a, ":"); a != "" && k != programName {
			attrs = append(attrs, a)
		}
	}
	t.cfg.ConnectionAttributes = strings.Join(append(attrs, programName+":"+name), ",")
}

// programName is the connection attribute that names a client's program.
const programName = "program_name"

// connIDs are the ids of the connections a target opened: its own, which
// the telemetry tells from other clients' by them where it cannot read
// the connections' attributes.
type connIDs struct {
	mu  sync.Mutex
	ids map[int64]bool
}

func (c *connIDs) add(id int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ids == nil {
		c.ids = map[int64]bool{}
	}
	c.ids[id] = true
}

func (c *connIDs) has(id int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ids[id]
}

// idConnector opens connections with the driver's connector and keeps
// each one's id.
type idConnector struct {
	driver.Connector
	ids *connIDs
}

func (c idConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	id, err := connectionID(ctx, conn)
	if err != nil {
		conn.Close()
		return nil, err
	}
	c.ids.add(id)
	return conn, nil
}

// connectionID asks the server for conn's id, as its process list shows
// it.
func connectionID(ctx context.Context, conn driver.Conn) (int64, error) {
	q, ok := conn.(driver.QueryerContext)
	if !ok {
		return 0, fmt.Errorf("the driver's connection %T runs no queries", conn)
	}
	rows, err := q.QueryContext(ctx, "SELECT CONNECTION_ID()", nil)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	v := make([]driver.Value, 1)
	if err := rows.Next(v); err != nil {
		return 0, err
	}
	switch id := v[0].(type) {
	case int64:
		return id, nil
	case []byte:
		return strconv.ParseInt(string(id), 10, 64)
	}
	return 0, fmt.Errorf("CONNECTION_ID() gave %T", v[0])
}

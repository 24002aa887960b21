//go:build !linux

package postgres

import (
	"context"
	"net"

	"github.com/dbrig/dbrig/internal/dbtarget"
)

// dialQuiet dials as pgx would. The raw-syscall connection of quiet.go is
// Linux's; other systems keep Go's ordinary socket I/O.
func dialQuiet(ctx context.Context, network, addr string) (net.Conn, error) {
	return dbtarget.Dialer().DialContext(ctx, network, addr)
}

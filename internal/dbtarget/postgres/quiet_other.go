//go:build !linux

package postgres

import (
	"context"
	"net"
)

// dialQuiet dials as pgx would. The raw-syscall connection of quiet.go is
// Linux's; other systems keep Go's ordinary socket I/O.
func dialQuiet(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

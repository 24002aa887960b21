//go:build !unix

package server

import (
	"context"

	"github.com/dbrig/dbrig/internal/exitcode"
)

// Kill needs a unix host, as every managed server does.
func Kill(context.Context, Server) (int, error) {
	return 0, exitcode.Userf("managed servers need a unix host")
}

// Restart needs a unix host, as every managed server does.
func Restart(context.Context, Server, map[string]string) error {
	return exitcode.Userf("managed servers need a unix host")
}

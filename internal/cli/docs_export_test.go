package cli

import (
	"io"

	"github.com/spf13/cobra"
)

// NewRoot is dbrig's command tree, for the tests that check the docs'
// commands against it without running them.
func NewRoot() *cobra.Command {
	var trace bool
	return newRoot(io.Discard, io.Discard, &trace)
}

// Command dbrig is a test rig for database performance.
package main

import (
	"os"

	"github.com/dbrig/dbrig/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}

package cli_test

import (
	"path/filepath"
	"testing"
)

// TestKeyedTerminalsSQLite: a keyed run of more than the specification's
// ten terminals a warehouse is refused in one line before it starts.
func TestKeyedTerminalsSQLite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	u := "sqlite:" + filepath.Join(dir, "k.db")
	mustRun(t, "build", "tproc-c", "--target", u, "--warehouses", "1")
	out := filepath.Join(dir, "r.json")
	msg := usageError(t, dbrig(t, "run", "tproc-c", "--target", u, "--keying-thinking", "--vus", "11", "--duration", "1s", "--json", out))
	wantIn(t, "refusal", msg, "10 terminals a warehouse")
	wantIn(t, "refusal", msg, "--vus 10 or fewer")
	noFile(t, out)
}

//go:build unix

package harness

import (
	"fmt"

	"github.com/dbrig/dbrig/internal/result"
)

// Counts are what a tproc-c run's result document counted in its window.
type Counts struct {
	// NOPM and TPM are the database's counts where the result has them
	// (FromDB), else the client's, which NOPMClient and TPMClient always
	// are.
	NOPM, TPM, NOPMClient, TPMClient float64
	FromDB                           bool
	WindowSeconds                    float64
	// Errors are the transactions' errors, of every type.
	Errors int64
}

// ReadCounts reads the counts of the result at path, of the run named
// what, which must have ended by itself and counted transactions.
func ReadCounts(path, what string) (Counts, error) {
	var c Counts
	doc, err := result.Read(path)
	if err != nil {
		return c, err
	}
	if doc.Interrupted {
		return c, fmt.Errorf("the %s run was interrupted", what)
	}
	nopm, _ := doc.Metric("nopm")
	tpm, _ := doc.Metric("tpm")
	if nopm.Client == nil || tpm.Client == nil || *tpm.Client == 0 {
		return c, fmt.Errorf("the %s run counted no transactions on the client side", what)
	}
	c.NOPMClient, c.TPMClient = *nopm.Client, *tpm.Client
	c.NOPM, c.TPM = c.NOPMClient, c.TPMClient
	if nopm.DB != nil && tpm.DB != nil {
		c.NOPM, c.TPM, c.FromDB = *nopm.DB, *tpm.DB, true
	}
	c.WindowSeconds = doc.WindowSeconds
	for _, tx := range doc.Transactions {
		c.Errors += tx.Errors
	}
	return c, nil
}

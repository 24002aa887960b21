//go:build !linux

package server

// ClientPin stands in for Linux's CPU affinity, which the client is never
// given elsewhere.
type ClientPin struct {
	CPUs string
	Note string
}

// PinClient leaves the client alone and says so.
func PinClient(serverCPUs string) (*ClientPin, error) {
	return &ClientPin{Note: "The client is not kept off the server's CPUs on this OS."}, nil
}

// Undo has nothing to undo.
func (p *ClientPin) Undo() error { return nil }

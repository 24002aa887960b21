package blockio

// TxTypes are its runs' transaction types, known without a target.
func (w *blockio) TxTypes() []string {
	if w.mode == modeLoop {
		return loopTxNames
	}
	return txNames
}

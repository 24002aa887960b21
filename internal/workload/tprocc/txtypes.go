package tprocc

// TxTypes are its runs' transaction types, known without a target.
func (w *tprocc) TxTypes() []string { return txNames }

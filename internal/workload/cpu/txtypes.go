package cpu

// TxTypes are its runs' transaction types, known without a target.
func (w *cpu) TxTypes() []string { return []string{txLoop} }

package dvdstore

// TxTypes are its runs' transaction types, known without a target.
func (w *dvdstore) TxTypes() []string { return stepNames }

// TxTypes are the reports' runs' transaction types.
func (w *reports) TxTypes() []string { return reportTx }

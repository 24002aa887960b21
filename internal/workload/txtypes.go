package workload

// TxTyper is a Workload that names its transaction types without a
// target, as its opened runs' TxNames do, so that what names one (a
// threshold on its latency) is checked before anything runs.
type TxTyper interface {
	TxTypes() []string
}

// MixTxTypes are the transaction types of a run of ws, the first's as
// they are and the others' prefixed with their workload's name, as Mixed
// names them; nil where one of ws does not say.
func MixTxTypes(ws []Workload) []string {
	var out []string
	for i, w := range ws {
		t, ok := w.(TxTyper)
		if !ok {
			return nil
		}
		for _, n := range t.TxTypes() {
			if i > 0 {
				n = w.Name() + ":" + n
			}
			out = append(out, n)
		}
	}
	return out
}

package sqldb

import "strconv"

// driverArgs makes the workload's arguments ones a database/sql driver
// takes. The drivers take no arrays, so a list of integers, such as the
// lines a routine is handed, goes as a JSON array, "[3,1,4]", which the
// database reads with its JSON functions. The workload's slice is copied
// before anything in it is replaced.
func driverArgs(args []any) []any {
	copied := false
	for i, a := range args {
		l, ok := a.([]int32)
		if !ok {
			continue
		}
		if !copied {
			args, copied = append([]any(nil), args...), true
		}
		args[i] = jsonInts(l)
	}
	return args
}

func jsonInts(l []int32) string {
	b := make([]byte, 0, 2+len(l)*6)
	b = append(b, '[')
	for i, n := range l {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(n), 10)
	}
	return string(append(b, ']'))
}

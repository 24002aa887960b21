p='/work/wt-fuzz/internal/workload/sqlfile.go'
s=open(p).read()
old='''// SQLFile is a file of named blocks: a line "-- name: NAME" starts a block
// that runs to the next such line. Other comment lines are dropped.'''
new='''// SQLFile is a file of named blocks: a line "-- name: NAME" starts a block
// that runs to the next such line. Other comment lines are dropped; SQL
// before the first block, or in a block without a name, is an error, not
// lost.'''
assert old in s
s=s.replace(old,new)
old='''	for _, line := range strings.Split(string(b), "\\n") {
		t := strings.TrimSpace(line)
		if n, ok := strings.CutPrefix(t, "-- name:"); ok {
			flush()
			name = strings.TrimSpace(n)
			if _, dup := f[name]; dup {'''
new='''	for i, line := range strings.Split(string(b), "\\n") {
		t := strings.TrimSpace(line)
		if n, ok := strings.CutPrefix(t, "-- name:"); ok {
			flush()
			name = strings.TrimSpace(n)
			if name == "" {
				return nil, fmt.Errorf("%s line %d: a block without a name", path, i+1)
			}
			if _, dup := f[name]; dup {'''
assert old in s
s=s.replace(old,new)
old='''		if strings.HasPrefix(t, "--") {
			continue
		}
		sb.WriteString(line)'''
new='''		if strings.HasPrefix(t, "--") {
			continue
		}
		if name == "" && t != "" {
			return nil, fmt.Errorf("%s line %d: SQL before the first \\"-- name:\\" line, in no block", path, i+1)
		}
		sb.WriteString(line)'''
assert old in s
s=s.replace(old,new)
open(p,'w').write(s)

p='/work/wt-fuzz/internal/workload/sqlfile_test.go'
s=open(p).read()
old='''	"sql/mysql/dup.sql":    {Data: []byte("-- name: y\\none\\n-- name: y\\ntwo\\n")},
}'''
new='''	"sql/mysql/dup.sql":    {Data: []byte("-- name: y\\none\\n-- name: y\\ntwo\\n")},
	"sql/mysql/loose.sql":  {Data: []byte("-- why\\nlost\\n-- name: y\\none\\n")},
	"sql/mysql/blank.sql":  {Data: []byte("-- name: y\\none\\n-- name:\\nlost\\n")},
}'''
assert old in s
s=s.replace(old,new)
old='''	// A block in no layer is a bug in the embedded files'''
new='''	// SQL that would go into no block, found by FuzzParseSQL.
	if _, err := LoadSQL(sqlTree, "sql", mariadb, "loose.sql"); err == nil || !strings.Contains(err.Error(), "loose.sql line 2: SQL before the first") {
		t.Errorf("SQL before the first block: err = %v", err)
	}
	if _, err := LoadSQL(sqlTree, "sql", mariadb, "blank.sql"); err == nil || !strings.Contains(err.Error(), "blank.sql line 3: a block without a name") {
		t.Errorf("a block without a name: err = %v", err)
	}
	// A block in no layer is a bug in the embedded files'''
assert old in s
s=s.replace(old,new)
open(p,'w').write(s)

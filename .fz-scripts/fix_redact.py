p='/work/wt-fuzz/internal/target/redact.go'
s=open(p).read()
old='''var kvPassword = regexp.MustCompile(`(?i)(password\\s*=\\s*)('(?:[^'\\\\]|\\\\.)*'|\\S+)`)'''
assert old in s, "kv"
new='''// kvPassword is a password= and its value: bare, or quoted as libpq
// quotes, which counts only if the quote closes a value (a blank or the
// end follows it). Otherwise the quote after "x password=" that closes
// another value (user='x password=') would take the next value's
// opening quote for its end, and the password after it would be left.
var kvPassword = regexp.MustCompile(`(?i)(password\\s*=\\s*)(?:'(?:[^'\\\\]|\\\\.)*'(\\s|$)|\\S+)`)'''
s=s.replace(old,new)
old='''	s = kvPassword.ReplaceAllString(s, "${1}xxxxx")'''
assert old in s
s=s.replace(old,'''	s = kvPassword.ReplaceAllString(s, "${1}xxxxx${2}")''')
open(p,'w').write(s)
p='/work/wt-fuzz/internal/target/redact_test.go'
s=open(p).read()
old='''		{"host='a:b' password='x@ycret' dbname=d", "host='a:b' password=xxxxx dbname=d"},
'''
new='''		{"host='a:b' password='x@ycret' dbname=d", "host='a:b' password=xxxxx dbname=d"},
		// Nor can a value that ends in password=.
		{"user='xpassword=' password='s3cret' dbname=d", "user='xpassword=xxxxx password=xxxxx dbname=d"},
'''
assert old in s
s=s.replace(old,new)
open(p,'w').write(s)

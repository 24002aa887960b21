p='/work/wt-fuzz/internal/experiment/spec.go'
s=open(p).read()
old='''// specError is one line: where in the file, and what is wrong.
func specError(file string, line int, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)'''
new='''// specError is one line: where in the file, and what is wrong. A value
// the spec wrote over several lines shows its line breaks escaped.
func specError(file string, line int, format string, args ...any) error {
	msg := human.Unbroken(fmt.Sprintf(format, args...))'''
assert old in s
s=s.replace(old,new)
old='''		return nil, target.Userf("%s: %s", file, strings.TrimPrefix(err.Error(), "yaml: "))'''
new='''		return nil, specError(file, 0, "%s", strings.TrimPrefix(err.Error(), "yaml: "))'''
assert old in s
s=s.replace(old,new)
s=s.replace('''	"github.com/dbrig/dbrig/internal/runner"''','''	"github.com/dbrig/dbrig/internal/human"
	"github.com/dbrig/dbrig/internal/runner"''',1)
open(p,'w').write(s)

p='/work/wt-fuzz/internal/human/human.go'
s=open(p).read()
old='''// OneLine is err's message up to its first line break'''
new='''// Unbroken is s on one line, its line breaks written as \\n and \\r: a value
// someone wrote over several lines, shown whole in a one-line message.
func Unbroken(s string) string { return lineBreaks.Replace(s) }

var lineBreaks = strings.NewReplacer("\\n", `\\n`, "\\r", `\\r`)

// OneLine is err's message up to its first line break'''
assert old in s
s=s.replace(old,new)
open(p,'w').write(s)

p='/work/wt-fuzz/internal/human/human_test.go'
s=open(p).read()
s=s.rstrip('\n')+'''

func TestUnbroken(t *testing.T) {
	if got, want := Unbroken("a\\nb\\r\\nc"), `a\\nb\\r\\nc`; got != want {
		t.Errorf("Unbroken = %q, want %q", got, want)
	}
}
'''
open(p,'w').write(s)

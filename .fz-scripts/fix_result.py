p='/work/wt-fuzz/internal/result/result.go'
s=open(p).read()
old='''// readRun is Read of the document b, read from path.
'''
new='''// readRun is Read of the document b, read from path. An upgraded document
// says schema 2, as it now is, so that written back it reads back the same.
'''
assert old in s
s=s.replace(old,new)
old='''		if err := upgradeRun(b, &d); err != nil {
			return nil, fmt.Errorf("%s: not a dbrig result: %v", path, err)
		}
	}'''
new='''		if err := upgradeRun(b, &d); err != nil {
			return nil, fmt.Errorf("%s: not a dbrig result: %v", path, err)
		}
		d.SchemaVersion = SchemaVersion
	}'''
assert old in s
s=s.replace(old,new)
open(p,'w').write(s)
p='/work/wt-fuzz/internal/result/sweep.go'
s=open(p).read()
old='''// readSweep is ReadSweep of the document b, read from path.
'''
new='''// readSweep is ReadSweep of the document b, read from path. An upgraded
// document says schema 2, as it now is: a resumed sweep writes it back in
// schema 2's shape, which another upgrade would read without its metrics.
'''
assert old in s
s=s.replace(old,new)
old='''		err = upgradeSweep(b, &s)
'''
new='''		err = upgradeSweep(b, &s)
		s.SchemaVersion = SchemaVersion
'''
assert old in s
s=s.replace(old,new)
open(p,'w').write(s)

//go:build !unix

package experiment

// syncDisks does nothing where there is no sync(2): nor is there a
// /proc/sys/vm/drop_caches to drop the cache with, which DropPageCache
// then reports.
func syncDisks() {}

//go:build unix

package experiment

import "syscall"

// syncDisks writes back dirty pages before the page cache is dropped.
func syncDisks() { syscall.Sync() }

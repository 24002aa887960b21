package experiment

import (
	"errors"
	"os"
	"syscall"
)

// DropPageCache writes back dirty pages and drops the clean ones, so a
// run reads from storage as the first run did. Only root may.
func DropPageCache() error {
	syncDisks()
	f, err := os.OpenFile("/proc/sys/vm/drop_caches", os.O_WRONLY, 0)
	if err != nil {
		return reason(err)
	}
	defer f.Close()
	if _, err := f.WriteString("3\n"); err != nil {
		return reason(err)
	}
	return nil
}

// reason is what stopped a cache drop, in a few words.
func reason(err error) error {
	switch {
	case errors.Is(err, os.ErrPermission):
		return errors.New("not permitted (needs root)")
	case errors.Is(err, syscall.EROFS):
		return errors.New("/proc/sys is read-only here (a container?)")
	case errors.Is(err, os.ErrNotExist):
		return errors.New("no /proc/sys/vm/drop_caches on this OS")
	}
	return err
}

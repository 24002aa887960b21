//go:build !linux

package telemetry

import (
	"errors"
	"runtime"
	"time"
)

// errNotLinux is why perf counters and device numbers are missing: they
// are read the Linux way.
var errNotLinux = errors.New("perf counters and block devices are read the Linux way; this is " + runtime.GOOS)

func openCycles(int) (int, error)                  { return -1, errNotLinux }
func readCycles(int, *[24]byte) (perfCount, error) { return perfCount{}, errNotLinux }
func closeFD(int) error                            { return errNotLinux }
func deviceNumbers(string) (string, string, error) { return "", "", errNotLinux }

func threadCPU() (time.Duration, bool) { return 0, false }

package workload

import (
	"fmt"
	"math"
)

// ConfigReader reads a run's config as a document holds it, read back
// from JSON (numbers float64), or as Run.Config made it (int, int64).
// The first key missing or of another type is kept as Err, and the
// readers after it return zero values, so a caller reads every key it
// needs and checks once.
type ConfigReader struct {
	m   map[string]any
	err error
}

// ReadConfig reads m.
func ReadConfig(m map[string]any) *ConfigReader { return &ConfigReader{m: m} }

// Err is the first key that was missing or of another type.
func (c *ConfigReader) Err() error { return c.err }

// get is key's value; nil after an error, or for a key missing or null,
// which is the error.
func (c *ConfigReader) get(key string) any {
	if c.err != nil {
		return nil
	}
	v := c.m[key]
	if v == nil {
		c.err = fmt.Errorf("config: no %q", key)
	}
	return v
}

// mistyped records that key holds v where want was expected.
func (c *ConfigReader) mistyped(key string, v any, want string) {
	if c.err == nil {
		c.err = fmt.Errorf("config: %q is %v (%T), want %s", key, v, v, want)
	}
}

// Int reads an integer.
func (c *ConfigReader) Int(key string) int {
	switch v := c.get(key).(type) {
	case nil:
	case float64:
		if v == math.Trunc(v) && math.Abs(v) <= 1<<53 {
			return int(v)
		}
		c.mistyped(key, v, "an integer")
	case int:
		return v
	case int64:
		return int(v)
	default:
		c.mistyped(key, v, "an integer")
	}
	return 0
}

// Bool reads a boolean.
func (c *ConfigReader) Bool(key string) bool { return read[bool](c, key, "true or false") }

// String reads a string.
func (c *ConfigReader) String(key string) string { return read[string](c, key, "a string") }

// read reads key's value as a T, want in words.
func read[T any](c *ConfigReader, key, want string) T {
	v := c.get(key)
	x, ok := v.(T)
	if !ok && v != nil {
		c.mistyped(key, v, want)
	}
	return x
}

package workload

import (
	"encoding/json"
	"testing"
)

// TestConfigReader: a config read back from JSON gives its integers,
// booleans and strings as Run.Config made them, and a key missing, null
// or of another type is the one error, named, with zero values after it.
func TestConfigReader(t *testing.T) {
	made := map[string]any{"warehouses": 4, "scale": int64(2048), "keying": true, "mode": "procs"}
	b, err := json.Marshal(made)
	if err != nil {
		t.Fatal(err)
	}
	var read map[string]any
	if err := json.Unmarshal(b, &read); err != nil {
		t.Fatal(err)
	}
	for _, m := range []map[string]any{made, read} {
		c := ReadConfig(m)
		w, s, k, mode := c.Int("warehouses"), c.Int("scale"), c.Bool("keying"), c.String("mode")
		if err := c.Err(); err != nil || w != 4 || s != 2048 || !k || mode != "procs" {
			t.Errorf("%v: read %d, %d, %v, %q, %v", m, w, s, k, mode, err)
		}
	}
	for _, c := range []struct {
		read func(*ConfigReader) any
		want string
	}{
		{func(c *ConfigReader) any { return c.Int("absent") }, `config: no "absent"`},
		{func(c *ConfigReader) any { return c.Int("null") }, `config: no "null"`},
		{func(c *ConfigReader) any { return c.Int("mode") }, `config: "mode" is procs (string), want an integer`},
		{func(c *ConfigReader) any { return c.Int("half") }, `config: "half" is 2.5 (float64), want an integer`},
		{func(c *ConfigReader) any { return c.Bool("warehouses") }, `config: "warehouses" is 4 (float64), want true or false`},
		{func(c *ConfigReader) any { return c.String("keying") }, `config: "keying" is true (bool), want a string`},
	} {
		r := ReadConfig(map[string]any{"warehouses": 4.0, "keying": true, "mode": "procs", "half": 2.5, "null": nil})
		c.read(r)
		if after := r.Int("warehouses"); r.Err() == nil || r.Err().Error() != c.want || after != 0 {
			t.Errorf("error %v, then %d; want %s, then 0", r.Err(), after, c.want)
		}
	}
}

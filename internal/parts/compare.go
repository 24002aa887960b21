package parts

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Canonical is cfg as JSON with every map's keys sorted, at any depth,
// and its SHA-256 in hex: two parts whose configurations hash the same
// run the same workload the same way. cfg is first encoded and decoded
// again, so that a struct or a typed number in it is written as JSON
// reads it back (a document's config, read from its file, hashes the
// same). A configuration JSON cannot encode could not be written to the
// run's document either, and panics: it is a bug.
func Canonical(cfg map[string]any) (canonical []byte, sha256hex string) {
	b, err := json.Marshal(cfg)
	if err == nil {
		var v any
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		if err = d.Decode(&v); err == nil {
			b, err = json.Marshal(v)
		}
	}
	if err != nil {
		panic(fmt.Sprintf("parts: the run's configuration is not JSON: %v", err))
	}
	sum := sha256.Sum256(b)
	return b, hex.EncodeToString(sum[:])
}

// differs names the keys where two canonical configurations differ,
// flattened with dots (c_run.c_last), sorted, with each side's value as
// JSON has it (strings bare unless empty or spaced; "none" for a key one side lacks).
func differs(ours, theirs []byte) (keys []string, our, their map[string]string, err error) {
	if our, err = flatten(ours); err != nil {
		return nil, nil, nil, err
	}
	if their, err = flatten(theirs); err != nil {
		return nil, nil, nil, err
	}
	for k, v := range our {
		if w, ok := their[k]; !ok || w != v {
			keys = append(keys, k)
		}
	}
	for k := range their {
		if _, ok := our[k]; !ok {
			keys = append(keys, k)
			our[k] = "none"
		}
	}
	for _, k := range keys {
		if _, ok := their[k]; !ok {
			their[k] = "none"
		}
	}
	slices.Sort(keys)
	return keys, our, their, nil
}

// flatten reads a canonical configuration into its leaves, keyed by their
// dotted paths; a list is one leaf.
func flatten(canonical []byte) (map[string]string, error) {
	var v any
	d := json.NewDecoder(bytes.NewReader(canonical))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("a part's configuration: %w", err)
	}
	out := map[string]string{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		if m, ok := v.(map[string]any); ok && (len(m) > 0 || prefix == "") {
			for k, e := range m {
				walk(strings.TrimPrefix(prefix+"."+k, "."), e)
			}
			return
		}
		if s, ok := v.(string); ok {
			if s == "" || strings.ContainsAny(s, " \t\r\n") {
				s = strconv.Quote(s)
			}
			out[prefix] = s
			return
		}
		b, _ := json.Marshal(v) // decoded from JSON: it encodes
		out[prefix] = string(b)
	}
	walk("", v)
	return out, nil
}

// mismatch is the reason a part whose configuration differs from the
// run's fails it: "part 2's duration 10s differs from part 1's 20s", or
// for several keys "part 2's duration 10s, vus 6 differ from part 1's
// duration 20s, vus 4", at most maxKeys of them named.
func mismatch(part, leader int, keys []string, ours, theirs map[string]string) string {
	const maxKeys = 4
	more := ""
	if len(keys) > maxKeys {
		more = fmt.Sprintf(" (and %d more)", len(keys)-maxKeys)
		keys = keys[:maxKeys]
	}
	rest := ": every part must run the same flags and workload settings"
	if len(keys) == 1 {
		k := keys[0]
		return fmt.Sprintf("part %d's %s %s differs from part %d's %s%s", part, k, ours[k], leader, theirs[k], rest)
	}
	side := func(vals map[string]string) string {
		s := make([]string, len(keys))
		for i, k := range keys {
			s[i] = k + " " + vals[k]
		}
		return strings.Join(s, ", ")
	}
	return fmt.Sprintf("part %d's %s differ from part %d's %s%s%s", part, side(ours), leader, side(theirs), more, rest)
}

package result

import (
	"encoding/json"
	"maps"
	"slices"
)

// perHost are the config keys each part sets for its own host, which
// parts need not share: a merged document leaves them out.
var perHost = []string{"client_cpus"}

// sharedConfig is a part's config without its per-host keys.
func sharedConfig(cfg map[string]any) map[string]any {
	out := maps.Clone(cfg)
	for _, k := range perHost {
		delete(out, k)
	}
	return out
}

// flatConfig is a config's values by dotted key ("c_run.c_last"), a
// string as itself and any other value as JSON, per-host keys left out.
func flatConfig(cfg map[string]any) map[string]string {
	out := map[string]string{}
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, v := range m {
			if sub, ok := v.(map[string]any); ok {
				walk(prefix+k+".", sub)
				continue
			}
			if str, ok := v.(string); ok {
				out[prefix+k] = str
				continue
			}
			b, err := json.Marshal(v)
			if err != nil {
				b = []byte("?")
			}
			out[prefix+k] = string(b)
		}
	}
	walk("", sharedConfig(cfg))
	return out
}

// configDiff names the keys whose values differ between two flattened
// configs, sorted; a key one lacks differs.
func configDiff(fa, fb map[string]string) []string {
	var keys []string
	for k := range fa {
		if v, ok := fb[k]; !ok || v != fa[k] {
			keys = append(keys, k)
		}
	}
	for k := range fb {
		if _, ok := fa[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

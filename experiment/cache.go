package experiment

import (
	"os"
	"path/filepath"
	"strings"

	"benchmatrix/catalog"
)

// CacheOff is the [server] cache value that turns the data cache off.
const CacheOff = "off"

// cacheKey decodes [server] cache (a directory, or "off") and cache_size
// (the cache's size limit: "20G", or a number of bytes). Only providers
// that read them (the sandbox) accept them: validate.go's providerKeys.
func (d *decoder) cacheKey(key, k string, v any, m *Manifest) {
	switch k {
	case "cache":
		s, ok := d.str(key, v)
		if !ok {
			return
		}
		s = strings.TrimSpace(s)
		switch {
		case s == "":
			d.problem(key, "want a directory, or \"off\"")
		case strings.EqualFold(s, CacheOff):
			m.Server.Cache = CacheOff
		default:
			m.Server.Cache = expandHome(s)
		}
	case "cache_size":
		s, ok := valueText(v)
		if !ok {
			d.problem(key, "want a size such as \"20G\", got a %s", typeName(v))
			return
		}
		if _, err := catalog.ParseBytes(s); err != nil {
			d.problem(key, "%v", err)
			return
		}
		m.Server.CacheSize = s
	}
}

// expandHome turns a leading ~/ into the home directory.
func expandHome(p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, rest)
		}
	}
	return p
}

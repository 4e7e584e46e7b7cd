package experiment

import (
	"strings"
	"testing"
)

// [server] cache and cache_size: decoded, checked with key and line, and
// refused for providers that cannot use the cache.
func TestCacheKeys(t *testing.T) {
	t.Parallel()
	m, err := Parse("m.toml", "[server]\ncache = \"/var/cache/bm\"\ncache_size = \"5G\"\n[workload]\nname = \"oltp_read_only\"\n")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Resolve(m, Flags{}); err != nil || m.Server.Cache != "/var/cache/bm" || m.Server.CacheSize != "5G" {
		t.Fatalf("cache keys: %q %q %v", m.Server.Cache, m.Server.CacheSize, err)
	}
	m, err = Parse("m.toml", "[server]\ncache = \"OFF\"\n[workload]\nname = \"oltp_read_only\"\n")
	if err != nil || m.Server.Cache != CacheOff {
		t.Fatalf("cache = OFF: %q %v", m.Server.Cache, err)
	}
	for _, c := range []struct{ src, want string }{
		{"[server]\ncache = 3\n", "line 2: server.cache: want a string, got a"},
		{"[server]\ncache = \"\"\n", "line 2: server.cache: want a directory, or \"off\""},
		{"[server]\ncache_size = \"lots\"\n", "line 2: server.cache_size: want a size"},
		{"[server]\ncache_size = -5\n", "line 2: server.cache_size:"},
		{"[server]\nprovider = \"docker\"\ncache = \"/tmp/c\"\n", "line 3: server.cache: provider docker does not read it"},
		{"[server]\nprovider = \"external\"\ndsn = \"u@tcp(h:3306)/s\"\ncache_size = \"1G\"\n", "line 4: server.cache_size: provider external does not read it"},
	} {
		m, err := Parse("m.toml", c.src+"[workload]\nname = \"oltp_read_only\"\n")
		if err == nil {
			_, err = Resolve(m, Flags{})
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q:\n got %v\nwant %s", c.src, err, c.want)
		}
	}
}

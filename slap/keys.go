package slap

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Manifest keys: a slap workload in a manifest takes mariadb-slap's long
// option names with underscores (auto_generate_sql_load_type, or load_type
// for short). A cell runs one engine at one concurrency (their lists are
// axes in a manifest); everything else is as on the command line.
var manifestKeys = map[string]func(c *Config, v string) error{
	"auto_generate_sql":                     boolKey(func(c *Config) *bool { return &c.AutoGenerate }),
	"auto_generate_sql_load_type":           loadTypeKey,
	"load_type":                             loadTypeKey,
	"auto_generate_sql_add_autoincrement":   boolKey(func(c *Config) *bool { return &c.AddAutoIncrement }),
	"auto_generate_sql_guid_primary":        boolKey(func(c *Config) *bool { return &c.GUIDPrimary }),
	"auto_generate_sql_execute_number":      numKey(func(c *Config) *uint64 { return &c.ExecuteNumber }, 0),
	"auto_generate_sql_secondary_indexes":   numKey(func(c *Config) *uint64 { return &c.SecondaryIndexes }, 0),
	"auto_generate_sql_unique_query_number": numKey(func(c *Config) *uint64 { return &c.UniqueQueryNumber }, 0),
	"auto_generate_sql_unique_write_number": numKey(func(c *Config) *uint64 { return &c.UniqueWriteNumber }, 0),
	"auto_generate_sql_write_number":        numKey(func(c *Config) *uint64 { return &c.WriteNumber }, 0),
	"number_char_cols":                      colsKey(func(c *Config) (*int, *int) { return &c.CharCols, &c.CharColsIndex }),
	"number_int_cols":                       colsKey(func(c *Config) (*int, *int) { return &c.IntCols, &c.IntColsIndex }),
	"iterations":                            numKey(func(c *Config) *uint64 { return &c.Iterations }, 1),
	"number_of_queries":                     numKey(func(c *Config) *uint64 { return &c.NumberOfQueries }, 0),
	"commit":                                numKey(func(c *Config) *uint64 { return &c.Commit }, 0),
	"detach":                                numKey(func(c *Config) *uint64 { return &c.Detach }, 0),
	"query":                                 strKey(func(c *Config) *string { return &c.Query }),
	"create":                                strKey(func(c *Config) *string { return &c.Create }),
	"pre_query":                             strKey(func(c *Config) *string { return &c.PreQuery }),
	"post_query":                            strKey(func(c *Config) *string { return &c.PostQuery }),
	"delimiter": func(c *Config, v string) error {
		if v == "" {
			return fmt.Errorf("the delimiter may not be empty")
		}
		c.Delimiter = v
		return nil
	},
	"create_schema": func(c *Config, v string) error {
		if v == "" || strings.ContainsAny(v, "`\x00") {
			return fmt.Errorf("%q is not a schema name", v)
		}
		c.CreateSchema = v
		return nil
	},
	"concurrency": func(c *Config, v string) error {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 1 {
			return fmt.Errorf("%q: want a number of clients of at least 1 (a list of them is an axis: concurrency = [1, 10, 50])", v)
		}
		c.Concurrency = []int{n}
		return nil
	},
	"engine": func(c *Config, v string) error {
		e := parseEngines(v)
		if len(e) != 1 || e[0].Name == "" {
			return fmt.Errorf("%q: want one storage engine (a list of them is an axis: engine = [\"myisam\", \"innodb\"])", v)
		}
		c.Engines = e
		return nil
	},
}

// keyAliases are the engine's own names for the same things.
var keyAliases = map[string]string{"threads": "concurrency", "mysql_storage_engine": "engine", "num_threads": "concurrency"}

func canonicalKey(name string) string {
	n := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(name)), "-", "_")
	if a, ok := keyAliases[n]; ok {
		return a
	}
	return n
}

// IsKey reports whether name is a key a slap workload reads in a manifest.
func IsKey(name string) bool {
	_, ok := manifestKeys[canonicalKey(name)]
	return ok
}

// Keys lists the manifest keys, sorted.
func Keys() []string {
	return slices.Sorted(maps.Keys(manifestKeys))
}

// ManifestConfig is the defaults of a slap manifest workload: generated
// SQL (--auto-generate-sql) unless a query is given, one client, the
// schema dropped at the end.
func ManifestConfig() Config {
	c := DefaultConfig()
	c.Silent = true
	return c
}

// SetKey sets a manifest key.
func (c *Config) SetKey(name, value string) error {
	set, ok := manifestKeys[canonicalKey(name)]
	if !ok {
		return fmt.Errorf("unknown slap option %q (known: %s)", name, strings.Join(Keys(), ", "))
	}
	if err := set(c, value); err != nil {
		return fmt.Errorf("option %s: %w", name, err)
	}
	return nil
}

// Finish completes a manifest workload after its keys: generated SQL
// unless a query or create statement is given; then mariadb-slap's checks.
func (c *Config) Finish(autoSet bool) error {
	if !autoSet {
		c.AutoGenerate = c.Query == "" && c.Create == ""
	}
	if !c.AutoGenerate && c.Query == "" {
		return fmt.Errorf("a slap workload needs generated SQL (auto_generate_sql = true) or a query")
	}
	return c.Check()
}

func boolKey(f func(c *Config) *bool) func(*Config, string) error {
	return func(c *Config, v string) error {
		b, ok := boolValue(v)
		if !ok {
			return fmt.Errorf("%q: want true or false", v)
		}
		*f(c) = b == "1"
		return nil
	}
}

func numKey(f func(c *Config) *uint64, minimum uint64) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return fmt.Errorf("%q: want a whole number", v)
		}
		if n < minimum {
			return fmt.Errorf("%d is below the minimum %d", n, minimum)
		}
		*f(c) = n
		return nil
	}
}

func strKey(f func(c *Config) *string) func(*Config, string) error {
	return func(c *Config, v string) error { *f(c) = v; return nil }
}

func colsKey(f func(c *Config) (*int, *int)) func(*Config, string) error {
	return func(c *Config, v string) error {
		s := strings.TrimSpace(v)
		num, idx, _ := strings.Cut(s, ":")
		n, err := strconv.Atoi(num)
		if err != nil || n < 0 {
			return fmt.Errorf("%q: want a number of columns, optionally with :1 for an index on each", v)
		}
		i := 0
		if idx != "" {
			if i, err = strconv.Atoi(idx); err != nil {
				return fmt.Errorf("%q: want a number of columns, optionally with :1 for an index on each", v)
			}
		}
		a, b := f(c)
		*a, *b = n, i
		return nil
	}
}

func loadTypeKey(c *Config, v string) error {
	switch v {
	case LoadRead, LoadWrite, LoadUpdate, LoadKey, LoadMixed:
		c.LoadType = v
		return nil
	}
	return fmt.Errorf("%q: want read, write, update, key or mixed", v)
}

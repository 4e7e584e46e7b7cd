package oltp

// 0.5-era command lines: `--test=PATH/oltp.lua --oltp-table-size=N ...`,
// as sysbench 1.0.20 runs them with the legacy scripts it bundles in
// tests/include/oltp_legacy/. The script is recognised by its file name,
// whatever the directory; its options are the 0.5 names (--oltp-*,
// --mysql-table-engine), read as the scripts' set_vars() reads them; any
// other option is accepted silently, as sysbench does for scripts that
// declare no options. A --test naming a 1.0 script runs that workload.
//
// prepare creates the tables as the scripts' common.lua does (unsigned
// id and k, MAX_ROWS=1000000, "Creating secondary indexes on ..."; Family
// "legacy" in workloads.go); bulk_insert.lua creates its own two-column
// tables sbtest0..N-1 (workload_legacy_bulk.go). select_random_points.lua,
// select_random_ranges.lua (workload_legacy_random.go) and
// parallel_prepare.lua (workload_legacy_parallel_prepare.go) read the
// scripts' num_threads, the --num-threads option, not --threads. A script
// without a Workload would be refused with the 1.0 workload to use
// instead; today every bundled script runs.
// legacy_equivalence_test.go and legacy_load_equivalence_test.go check
// each script against the real sysbench running it from its source tree.

import (
	"fmt"
	"path/filepath"
	"strings"
)

// LegacyScript is one of sysbench 1.0.20's bundled legacy scripts.
type LegacyScript struct {
	File string // "oltp.lua"
	// Workload runs it here; "" when it is not supported (Nearest is the
	// 1.0 workload to use instead).
	Workload            string
	Nearest             string
	readOnly, writeOnly bool // --oltp-read-only, --oltp-write-only (oltp.lua)
}

var legacyScripts = []LegacyScript{
	{File: "oltp.lua", Workload: "oltp_legacy"},
	{File: "select.lua", Workload: "legacy_select"},
	{File: "oltp_simple.lua", Workload: "legacy_oltp_simple"},
	{File: "insert.lua", Workload: "legacy_insert"},
	{File: "delete.lua", Workload: "legacy_delete"},
	{File: "update_index.lua", Workload: "legacy_update_index"},
	{File: "update_non_index.lua", Workload: "legacy_update_non_index"},
	{File: "select_random_points.lua", Workload: "legacy_select_random_points"},
	{File: "select_random_ranges.lua", Workload: "legacy_select_random_ranges"},
	{File: "parallel_prepare.lua", Workload: "legacy_parallel_prepare"},
	{File: "bulk_insert.lua", Workload: "legacy_bulk_insert"},
}

// legacyScript returns the legacy script a --test value or test name
// names, or nil. Only a name ending in ".lua" is a script file name.
// select_random_points.lua, select_random_ranges.lua and bulk_insert.lua
// are also 1.0 scripts: they are the legacy ones only in a directory
// named oltp_legacy.
func legacyScript(test string) *LegacyScript {
	slashed := filepath.ToSlash(test)
	base := filepath.Base(slashed)
	inLegacyDir := filepath.Base(filepath.Dir(slashed)) == "oltp_legacy"
	for _, l := range legacyScripts {
		if l.File == base {
			if KnownWorkload(strings.TrimSuffix(base, ".lua")) && !inLegacyDir {
				return nil
			}
			l := l
			return &l
		}
	}
	return nil
}

func (l *LegacyScript) unsupported() string {
	return fmt.Sprintf("the legacy script %s is not supported by benchmatrix oltp (its statements differ from 1.0's); the nearest 1.0 workload is: benchmatrix oltp %s",
		l.File, l.Nearest)
}

// legacyOptionNames maps the legacy scripts' option names (underscored) to
// the engine's. --oltp-read-only and --oltp-write-only have no 1.0 name:
// they zero the write or read statements of oltp.lua.
var legacyOptionNames = map[string]string{
	"oltp_table_size":        "table_size",
	"oltp_tables_count":      "tables",
	"oltp_range_size":        "range_size",
	"oltp_point_selects":     "point_selects",
	"oltp_simple_ranges":     "simple_ranges",
	"oltp_sum_ranges":        "sum_ranges",
	"oltp_order_ranges":      "order_ranges",
	"oltp_distinct_ranges":   "distinct_ranges",
	"oltp_index_updates":     "index_updates",
	"oltp_non_index_updates": "non_index_updates",
	"oltp_delete_inserts":    "delete_inserts",
	"oltp_range_selects":     "range_selects",
	"oltp_auto_inc":          "auto_inc",
	"oltp_skip_trx":          "skip_trx",
	"oltp_secondary":         "secondary",
	"oltp_create_secondary":  "create_secondary",
	"mysql_table_engine":     "mysql_storage_engine",
}

// legacyDefaultOn lists the switches set_vars() turns off only for the
// exact value "off"; oltp_read_only, oltp_write_only and oltp_skip_trx
// are on only for the exact value "on". sysbench hands a script's
// undeclared option to Lua as a string, "" when it has no value, so a bare
// --oltp-read-only is off, and oltp_secondary, which common.lua only tests
// for truth, is on when given at all, even as --oltp-secondary=off.
var legacyDefaultOn = map[string]bool{"range_selects": true, "auto_inc": true, "create_secondary": true}

// option applies a legacy option; done is false for an option that is not
// a legacy one (the caller reads it as a 1.0 option).
func (l *LegacyScript) option(o *Options, name, value string, hasValue bool) (done bool, err error) {
	key := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(name)), "-", "_")
	on := hasValue && value == "on"
	switch key {
	case "oltp_read_only", "oltp_write_only":
		if key == "oltp_read_only" {
			l.readOnly = on
		} else {
			l.writeOnly = on
		}
		if l.readOnly && l.writeOnly {
			return true, fmt.Errorf("--oltp-read-only and --oltp-write-only are mutually exclusive")
		}
		return true, nil
	}
	if done, err := l.randomOption(o, key, value, hasValue); done { // workload_legacy_random.go
		return true, err
	}
	canon, ok := legacyOptionNames[key]
	if !ok {
		return false, nil
	}
	onOff := map[bool]string{true: "on", false: "off"}
	switch {
	case legacyDefaultOn[canon]:
		return true, o.Set(canon, onOff[!(hasValue && value == "off")])
	case canon == "skip_trx":
		return true, o.Set(canon, onOff[on])
	case canon == "secondary":
		return true, o.Set(canon, "on")
	case !hasValue || value == "":
		// tonumber("") is nil: set_vars() keeps the default. (A value that
		// is not a number is refused here; set_vars() would silently keep
		// the default for it too.)
		return true, nil
	}
	return true, o.Set(canon, value)
}

// legacyIgnores reports whether name is an option the 1.0 scripts declare
// (oltp_common.lua's --tables, --table-size, --point-selects, ...,
// --mysql-storage-engine; benchmatrix's own --recreate and --reinsert-id
// excepted): the legacy scripts declare no options and read none of
// these, so sysbench accepts them silently and they change nothing.
func legacyIgnores(name string) bool {
	canon, ok := CanonicalOption(name)
	if !ok || benchmatrixOnly[canon] {
		return false
	}
	for _, h := range helpOptions {
		if h.name == canon {
			return true
		}
	}
	return false
}

// apply sets what the legacy options imply once all are read;
// numThreads is the --num-threads option (0 when not given), the scripts'
// num_threads (sysbench's default 1; an explicit 0, which would have the
// scripts divide by zero, is read as 1 too).
func (l *LegacyScript) apply(o *Options, numThreads int) {
	o.numThreads = max(numThreads, 1)
	if l.readOnly {
		o.IndexUpdates, o.NonIndexUpdates, o.DeleteInserts = 0, 0, 0
	}
	if l.writeOnly {
		o.PointSelects, o.RangeSelects = 0, false
	}
}

// legacyHint is the line after "invalid option: --X" for a 0.5-era name
// given with a 1.0 workload: the 1.0 option, or the script that reads it.
func legacyHint(body string) string {
	name, _, _ := strings.Cut(body, "=")
	key := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(name)), "-", "_")
	if canon, ok := legacyOptionNames[key]; ok {
		return fmt.Sprintf("(--%s is a 0.5-era option: 1.0 workloads read --%s; the legacy scripts, --test=.../oltp_legacy/oltp.lua, read --%s)",
			name, strings.ReplaceAll(canon, "_", "-"), name)
	}
	if key == "oltp_read_only" || key == "oltp_write_only" || key == "oltp_test_mode" {
		return fmt.Sprintf("(--%s is a 0.5-era option: use the workloads oltp_read_only or oltp_write_only, or --test=.../oltp_legacy/oltp.lua)", name)
	}
	return ""
}

// legacyMaxRows is sysbench.compat.lua's myisam_max_rows, which the
// legacy scripts' CREATE TABLE passes as MAX_ROWS whatever the engine.
const legacyMaxRows = 1000000

// legacyCreateTableSQL is the legacy scripts' common.lua DDL for the MySQL
// driver: unsigned id and k, MAX_ROWS inside the version comment.
func legacyCreateTableSQL(o *Options, n int) string {
	autoInc := ""
	if o.AutoInc {
		autoInc = "AUTO_INCREMENT"
	}
	idIndex := "PRIMARY KEY"
	if o.Secondary {
		idIndex = "KEY xid"
	}
	return fmt.Sprintf(`CREATE TABLE sbtest%d (
id INTEGER UNSIGNED NOT NULL %s,
k INTEGER UNSIGNED DEFAULT '0' NOT NULL,
c CHAR(120) DEFAULT '' NOT NULL,
pad CHAR(60) DEFAULT '' NOT NULL,
%s (id)
) /*! ENGINE = %s MAX_ROWS = %d */ `, n, autoInc, idIndex, o.StorageEngine, legacyMaxRows)
}

package oltp

import (
	"fmt"
	"strconv"
	"strings"
)

// sysbench 1.0.20's legacy select_random_points.lua and
// select_random_ranges.lua (tests/include/oltp_legacy/). Like their 1.0
// namesakes they run one prepared SELECT on sbtest1 per event, with values
// of k drawn inside the worker's slice of the table, but:
//   - the slice is oltp_table_size / num_threads * thread_id up to
//     oltp_table_size / num_threads * (thread_id + 1), Lua floats that
//     sb_rand truncates, and num_threads is the --num-threads option, not
//     --threads (legacyThreads);
//   - prepare and cleanup are common.lua's (the "legacy" table family):
//     the scripts set oltp_tables_count = 1, which --oltp-tables-count
//     overrides, as sysbench exports the command line's options to the
//     globals again before it calls prepare() and cleanup();
//   - the options are --random-points, --number-of-ranges and
//     --random-ranges-delta, which the scripts read as strings (randomOption).

// legacyThreads is the legacy scripts' num_threads: the --num-threads
// option of a 0.5-era command line, else (a manifest) the threads.
func legacyThreads(o *Options) int {
	if o.numThreads > 0 {
		return o.numThreads
	}
	return o.Threads
}

// legacySliceBounds is the legacy scripts' sb_rand bounds for worker tid:
// oltp_table_size / num_threads * thread_id and
// oltp_table_size / num_threads * (thread_id + 1), computed in doubles as
// Lua does and truncated by the uint32_t arguments of sb_rand.
func legacySliceBounds(tableSize, threads, tid int) (uint32, uint32) {
	rlen := float64(tableSize) / float64(threads)
	return uint32(rlen * float64(tid)), uint32(rlen * float64(tid+1))
}

// legacyRandomOptions names the script that reads each option; the other
// legacy scripts leave it alone, as sysbench accepts any option for them.
var legacyRandomOptions = map[string]string{
	"random_points":       "select_random_points.lua",
	"number_of_ranges":    "select_random_ranges.lua",
	"random_ranges_delta": "select_random_ranges.lua",
	// The 1.0 name is nothing to the legacy scripts.
	"delta": "",
}

// randomOption reads the select_random_* scripts' options. They arrive
// as strings: `random_points or 10` keeps the string, which Lua's for loop
// and arithmetic then read as a number, so a value that is not one (or
// an empty one) makes the script fail; here it is refused. done is false
// for any other option.
func (l *LegacyScript) randomOption(o *Options, key, value string, hasValue bool) (done bool, err error) {
	script, ok := legacyRandomOptions[key]
	if !ok {
		return false, nil
	}
	if script != l.File {
		return true, nil
	}
	n, perr := strconv.Atoi(strings.TrimSpace(value))
	if !hasValue || perr != nil {
		return true, fmt.Errorf("%s reads --%s as a number: %q is not an integer",
			l.File, strings.ReplaceAll(key, "_", "-"), value)
	}
	if key == "random_ranges_delta" {
		o.Delta = n // any sign: the upper end is v + delta
		return true, nil
	}
	return true, o.Set(key, value)
}

// newLegacyRandomPointsSession is select_random_points.lua's event:
// SELECT id, k, c, pad FROM sbtest1 WHERE k IN (random_points values).
func newLegacyRandomPointsSession(e env) *randomPointsSession {
	n := e.o.RandomPoints
	sql := "        SELECT id, k, c, pad\n          FROM sbtest1\n          WHERE k IN (" +
		strings.Repeat("?, ", n-1) + "?)\n        "
	s := &randomPointsSession{env: e, st: newStmt(sql, true, n)}
	s.rmin, s.rmax = legacySliceBounds(e.o.TableSize, legacyThreads(e.o), e.tid)
	return s
}

// newLegacyRandomRangesSession is select_random_ranges.lua's event:
// SELECT count(k) FROM sbtest1 WHERE k BETWEEN v AND v+delta OR ...
// (number_of_ranges of them; the script keeps the space before the "OR "
// it cuts, and its closing [[ drops the newline that follows it).
func newLegacyRandomRangesSession(e env) *randomRangesSession {
	n := e.o.NumberOfRanges
	sql := "        SELECT count(k)\n          FROM sbtest1\n          WHERE " +
		strings.Repeat("k BETWEEN ? AND ? OR ", n-1) + "k BETWEEN ? AND ?         "
	s := &randomRangesSession{env: e, st: newStmt(sql, true, 2*n)}
	s.rmin, s.rmax = legacySliceBounds(e.o.TableSize, legacyThreads(e.o), e.tid)
	return s
}

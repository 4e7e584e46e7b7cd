package oltp

import "strconv"

// sysbench 1.0.20's legacy bulk_insert.lua (tests/include/oltp_legacy/).
// Unlike the 1.0 bulk_insert it numbers its tables from 0: prepare
// creates sbtest0..sbtest{num_threads-1} (num_threads is the --num-threads
// option, legacyThreads) with unsigned id and k only and ENGINE = InnoDB
// whatever --mysql-table-engine says, printing nothing; worker tid appends
// (n,n) to a multi-row INSERT into sbtest<tid>, flushed as sysbench's
// db_bulk_insert_next/_done do (bulkBuffer); cleanup drops the same
// tables, printing "Dropping table 'sbtestN'..." for each.

// legacyBulkFamily is the table family of legacy_bulk_insert.
const legacyBulkFamily = "legacy_bulk"

// legacyBulkCreateTableSQL is bulk_insert.lua's DDL for the MySQL driver.
func legacyBulkCreateTableSQL(n int) string {
	return "CREATE TABLE IF NOT EXISTS sbtest" + strconv.Itoa(n) + ` (
id INTEGER UNSIGNED NOT NULL,
k INTEGER UNSIGNED DEFAULT '0' NOT NULL,
PRIMARY KEY (id)
) ENGINE = InnoDB
`
}

// legacyBulkTables numbers bulk_insert.lua's tables: 0..num_threads-1.
func legacyBulkTables(o *Options) []int {
	nums := make([]int, legacyThreads(o))
	for i := range nums {
		nums[i] = i
	}
	return nums
}

// newLegacyBulkSession is bulk_insert.lua's event: the session of the 1.0
// bulk_insert with the INSERT going to sbtest<tid>.
func newLegacyBulkSession(e env) *bulkInsertSession {
	return &bulkInsertSession{env: e, bb: newBulkBuffer("INSERT INTO sbtest" + strconv.Itoa(e.tid) + " VALUES")}
}

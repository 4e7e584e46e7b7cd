package oltp

import (
	"fmt"
	"slices"
	"strings"
)

// WorkloadSpec describes one workload of the engine, once: the options it
// reads beyond the common ones, the data it needs, and what running it does
// to that data. The manifest language, the planner and the runner ask it
// instead of switching on workload names.
type WorkloadSpec struct {
	Name string
	// Reads are the script-specific options the workload reads; every
	// option not listed by any workload is common to all of them.
	Reads []string
	// TablesPerThread: one table per worker thread (bulk_insert), instead
	// of --tables.
	TablesPerThread bool
	// Family names the table layout ("sbtest"; "bulk" for bulk_insert's
	// two-column tables; "legacy" for the 0.5-era scripts' sbtest tables).
	Family string
	// emptyTables reports whether prepare creates the tables without rows.
	emptyTables func(o Options) bool
	// changesData reports whether a run changes the amount of data, so
	// that the next cell must not reuse it.
	changesData func(o Options) bool
	// onlyInserts: the workload only inserts new rows, so it runs on
	// empty tables (table_size may be 0).
	onlyInserts bool
	// autoIDs reports whether a run inserts rows whose ids AUTO_INCREMENT
	// chooses (AssignsIDs).
	autoIDs func(o Options) bool
	// noHelp: sysbench's script has no help command (bulk_insert).
	noHelp bool
	// tableNums numbers the tables when they are not 1..TableCount
	// (the legacy bulk_insert.lua's sbtest0..N-1; nil: the default).
	tableNums func(o *Options) []int
	// cliOnly: run by a command line, not a manifest workload (the legacy
	// parallel_prepare.lua, whose run creates the tables).
	cliOnly bool
	// session builds a worker's session (its statements and event).
	session func(e env) session
}

var (
	readWriteOptions = []string{"reinsert_id", "delete_inserts", "index_updates", "non_index_updates",
		"point_selects", "simple_ranges", "sum_ranges", "order_ranges", "distinct_ranges", "range_selects",
		"range_size", "skip_trx"}
	readOnlyOptions  = []string{"point_selects", "simple_ranges", "sum_ranges", "order_ranges", "distinct_ranges", "range_selects", "range_size", "skip_trx"}
	writeOnlyOptions = []string{"reinsert_id", "delete_inserts", "index_updates", "non_index_updates", "skip_trx"}

	never  = func(Options) bool { return false }
	always = func(Options) bool { return true }
	// reinsertAuto: the delete/insert pair lets AUTO_INCREMENT assign new
	// ids, so the table keeps growing (the second field report).
	reinsertAuto = func(o Options) bool { return o.ReinsertID == "auto" }
	// autoInc: the run's INSERTs leave the id to AUTO_INCREMENT.
	autoInc = func(o Options) bool { return o.AutoInc }
)

// workloadSpecs is the engine's workloads, in the order help texts list them.
var workloadSpecs = []WorkloadSpec{
	{Name: "oltp_read_write", Reads: readWriteOptions, changesData: reinsertAuto, autoIDs: reinsertAuto, session: commonSession},
	{Name: "oltp_read_only", Reads: readOnlyOptions, session: commonSession},
	{Name: "oltp_write_only", Reads: writeOnlyOptions, changesData: reinsertAuto, autoIDs: reinsertAuto, session: commonSession},
	{Name: "oltp_point_select", session: commonSession},
	// sysbench ≥ 1.0.10 leaves oltp_insert's tables empty without
	// auto_inc: its ids come from the whole 32-bit range, so preloaded
	// 1..N would only invite collisions.
	{Name: "oltp_insert", emptyTables: func(o Options) bool { return !o.AutoInc }, changesData: always, onlyInserts: true, autoIDs: autoInc,
		session: func(e env) session { return &insertSession{env: e} }},
	{Name: "oltp_delete", changesData: always, session: commonSession},
	{Name: "oltp_update_index", Reads: []string{"index_updates"}, session: commonSession},
	{Name: "oltp_update_non_index", Reads: []string{"non_index_updates"}, session: commonSession},
	{Name: "select_random_points", Reads: []string{"random_points"},
		session: func(e env) session { return newRandomPointsSession(e) }},
	{Name: "select_random_ranges", Reads: []string{"number_of_ranges", "delta"},
		session: func(e env) session { return newRandomRangesSession(e) }},
	{Name: "bulk_insert", TablesPerThread: true, Family: "bulk", emptyTables: always, changesData: always, onlyInserts: true,
		noHelp: true, session: func(e env) session { return &bulkInsertSession{env: e} }},
	// The legacy scripts create their tables as their common.lua does
	// (Family "legacy": INTEGER UNSIGNED columns, MAX_ROWS).
	{Name: "oltp_legacy", Reads: readWriteOptions, Family: "legacy", changesData: reinsertAuto, autoIDs: reinsertAuto,
		session: func(e env) session { return newLegacySession(e) }},
	// sysbench 1.0.20's single-statement legacy scripts
	// (tests/include/oltp_legacy/*.lua; legacy.go, workload_legacy_scripts.go),
	// run by `--test=PATH/select.lua` and friends.
	{Name: "legacy_select", Family: "legacy", session: legacyStatement(legacySelect)},
	{Name: "legacy_oltp_simple", Family: "legacy", session: legacyStatement(legacySimple)},
	{Name: "legacy_insert", Family: "legacy", changesData: always, autoIDs: autoInc, session: legacyStatement(legacyInsert)},
	{Name: "legacy_delete", Family: "legacy", changesData: always, session: legacyStatement(legacyDelete)},
	{Name: "legacy_update_index", Family: "legacy", session: legacyStatement(legacyUpdateIndex)},
	{Name: "legacy_update_non_index", Family: "legacy", session: legacyStatement(legacyUpdateNonIndex)},
	// The other four (workload_legacy_random.go, workload_legacy_bulk.go,
	// workload_legacy_parallel_prepare.go).
	{Name: "legacy_select_random_points", Reads: []string{"random_points"}, Family: "legacy",
		session: func(e env) session { return newLegacyRandomPointsSession(e) }},
	{Name: "legacy_select_random_ranges", Reads: []string{"number_of_ranges", "delta"}, Family: "legacy",
		session: func(e env) session { return newLegacyRandomRangesSession(e) }},
	{Name: "legacy_bulk_insert", TablesPerThread: true, Family: legacyBulkFamily, emptyTables: always, changesData: always,
		onlyInserts: true, noHelp: true, tableNums: legacyBulkTables,
		session: func(e env) session { return newLegacyBulkSession(e) }},
	{Name: "legacy_parallel_prepare", Family: "legacy", changesData: always, onlyInserts: true, cliOnly: true, autoIDs: autoInc,
		session: func(e env) session { return newLegacyParallelPrepareSession(e) }},
}

func legacyStatement(stmt func(s *legacyStatementSession, c *conn, table string) error) func(e env) session {
	return func(e env) session { return newLegacyStatementSession(e, stmt) }
}

// commonSession is oltp_common's event, shared by the oltp_* scripts.
func commonSession(e env) session { return newOLTPSession(e) }

// OnlyInserts reports whether o's workload only inserts new rows, so that
// it needs no preloaded rows.
func OnlyInserts(o Options) bool { return spec(o).onlyInserts }

// AssignsIDs reports whether o's run inserts rows whose ids AUTO_INCREMENT
// chooses (oltp_insert with auto_inc, reinsert_id = auto): those ids
// follow the server's auto_increment_increment and _offset, which a Galera
// node sets to the cluster's size and its place in it.
func AssignsIDs(o Options) bool { return spec(o).autoIDs(o) }

// ReadsOption reports whether o's workload reads a script-specific option.
func ReadsOption(o Options, option string) bool { return slices.Contains(spec(o).Reads, option) }

// Spec returns the description of a workload.
func Spec(name string) (WorkloadSpec, bool) {
	for _, w := range workloadSpecs {
		if w.Name == name {
			return w.withDefaults(), true
		}
	}
	return WorkloadSpec{}, false
}

func (w WorkloadSpec) withDefaults() WorkloadSpec {
	if w.Family == "" {
		w.Family = "sbtest"
	}
	if w.emptyTables == nil {
		w.emptyTables = never
	}
	if w.changesData == nil {
		w.changesData = never
	}
	if w.autoIDs == nil {
		w.autoIDs = never
	}
	return w
}

// spec is o's workload description (an unknown name has no special needs;
// Validate refuses it before any run).
func spec(o Options) WorkloadSpec {
	w, _ := Spec(o.Workload)
	return w.withDefaults()
}

// EmptyTables reports whether prepare creates o's tables without rows.
func EmptyTables(o Options) bool { return spec(o).emptyTables(o) }

// ChangesData reports whether running o changes the amount of data, so the
// next cell must load it again.
func ChangesData(o Options) bool { return spec(o).changesData(o) }

// TableCount is how many tables o's workload defines.
func TableCount(o Options) int {
	if w := spec(o); w.tableNums != nil {
		return len(w.tableNums(&o))
	}
	if spec(o).TablesPerThread {
		return o.Threads
	}
	return o.Tables
}

// TableNames lists the tables o's workload defines: sbtest1..N (sbtest0..
// for the legacy bulk_insert.lua).
func TableNames(o Options) []string {
	nums := tableNumbers(&o)
	names := make([]string, len(nums))
	for i, n := range nums {
		names[i] = tableName(n)
	}
	return names
}

// DataShape says what a run of o needs loaded: the table family and count
// and every option that reshapes the data. Two runs with the same shape can
// share loaded data (if the first did not change it).
func DataShape(o Options) string {
	w := spec(o)
	family := w.Family
	if w.TablesPerThread {
		family = fmt.Sprintf("%s/%d", family, o.Threads)
	}
	return fmt.Sprintf("%s tables=%d size=%d auto_inc=%v secondary=%v create_secondary=%v engine=%s empty=%v",
		family, o.Tables, o.TableSize, o.AutoInc, o.Secondary, o.CreateSecondary, strings.ToLower(o.StorageEngine),
		EmptyTables(o))
}

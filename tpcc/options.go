package tpcc

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Sizes fixed by the TPC-C specification (clause 4.3.3.1), as sysbench-tpcc
// uses them.
const (
	MaxItems        = 100000 // rows of item; rows of stock per warehouse
	DistPerWare     = 10     // districts per warehouse
	CustPerDist     = 3000   // customers (and initial orders) per district
	firstNewOrder   = 2101   // orders 2101..3000 of each district are undelivered
	maxOrderLines   = 15
	minOrderLines   = 5
	lastNameSpan    = 1000 // last names C_LAST numbers 0..999
	defaultScale    = 100
	defaultTables   = 1
	defaultTrxLevel = "RR"
)

// Options is one TPC-C workload: the data shape (sysbench-tpcc's options
// and their defaults) and the run.
type Options struct {
	// Workload is "tpcc" (run.json's "workload" names the engine).
	Workload string `json:"workload"`

	// Data shape.
	Tables       int    `json:"tables"`               // table sets: warehouse1..N, district1..N, ...
	Scale        int    `json:"scale"`                // warehouses per table set
	UseFK        bool   `json:"use_fk"`               // foreign keys (sysbench-tpcc's default 1)
	ForcePK      bool   `json:"force_pk"`             // an AUTO_INCREMENT primary key on history
	Engine       string `json:"mysql_storage_engine"` // ENGINE = ...
	TableOptions string `json:"mysql_table_options"`  // appended to CREATE TABLE

	// Run.
	TrxLevel    string        `json:"trx_level"` // RR, RC or SER
	Threads     int           `json:"threads"`
	Time        time.Duration `json:"time"`
	Events      int64         `json:"events"`
	Warmup      time.Duration `json:"warmup_time"`
	Interval    time.Duration `json:"report_interval"`
	Percentile  float64       `json:"percentile"`
	RandSeed    int64         `json:"rand_seed"`
	EnablePurge bool          `json:"enable_purge"` // the purge transaction in the mix (1 in 24)
	// IgnoreErrors are the server error numbers that restart an event
	// (sysbench's --mysql-ignore-errors, default 1213,1020,1205);
	// IgnoreAll restarts on any server error.
	IgnoreErrors []uint16 `json:"mysql_ignore_errors"`
	IgnoreAll    bool     `json:"mysql_ignore_all_errors,omitempty"`
	// Splittable sends START TRANSACTION READ WRITE / READ ONLY instead of
	// BEGIN (sysbench-tpcc's --splittable=yes).
	Splittable bool `json:"splittable,omitempty"`
	// Mix, when set, weighs the transaction types (New-Order, Payment,
	// Order-Status, Delivery, Stock-Level) instead of sysbench-tpcc's
	// 10/10/1/1/1 of 23; e.g. "45,43,4,4,4" (the specification's
	// minimums), or "0,1,0,0,0" for Payment alone.
	Mix []int `json:"mix,omitempty"`
	// InsertLoad makes prepare send multi-row INSERTs, as sysbench-tpcc
	// does, instead of LOAD DATA LOCAL INFILE (faster; used whenever the
	// server takes it).
	InsertLoad bool `json:"insert_load,omitempty"`
	// Keying adds the specification's keying and think times (clause
	// 5.2.5.7) around each transaction: off by default, as in
	// sysbench-tpcc and HammerDB.
	Keying bool `json:"keying,omitempty"`
	// CheckAfter runs the consistency conditions after a run (Check); in a
	// matrix, a violated condition fails the cell.
	CheckAfter bool `json:"check,omitempty"`
	// Grace is how long events in flight at the end of the window may
	// run on before their connections are closed (0: as long as they
	// take).
	Grace time.Duration `json:"grace,omitempty"`
}

// DefaultOptions are sysbench-tpcc's defaults (and sysbench's for the run).
func DefaultOptions() Options {
	return Options{
		Workload:     Name,
		Tables:       defaultTables,
		Scale:        defaultScale,
		UseFK:        true,
		Engine:       "innodb",
		TrxLevel:     defaultTrxLevel,
		Threads:      1,
		Time:         10 * time.Second,
		Percentile:   95,
		IgnoreErrors: []uint16{1213, 1020, 1205},
	}
}

// Keys are the data-shape and run options a manifest and the command line
// set by name (Set).
var Keys = []string{"tables", "scale", "warehouses", "use_fk", "force_pk", "trx_level", "mysql_storage_engine",
	"engine", "mysql_table_options", "enable_purge", "splittable", "mix", "keying", "check", "insert_load"}

// Set sets one TPC-C option by its sysbench-tpcc name (dashes or
// underscores); "warehouses" is scale and "engine" mysql_storage_engine.
func (o *Options) Set(name, value string) error {
	key := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(name)), "-", "_")
	switch key {
	case "tables":
		if err := setInt(&o.Tables, key, value); err != nil {
			return err
		}
		if o.Tables < 1 {
			return fmt.Errorf("%s = %d: there must be at least one table set", key, o.Tables)
		}
	case "scale", "warehouses":
		if err := setInt(&o.Scale, key, value); err != nil {
			return err
		}
		if o.Scale < 1 || o.Scale > 32767 {
			return fmt.Errorf("%s = %d: from 1 to 32767 warehouses (w_id is a smallint)", key, o.Scale)
		}
	case "use_fk":
		return setFlag(&o.UseFK, key, value)
	case "force_pk":
		return setFlag(&o.ForcePK, key, value)
	case "trx_level":
		v := strings.ToUpper(strings.TrimSpace(value))
		if _, ok := isolationLevels[v]; !ok {
			return fmt.Errorf("%s: %q is not an isolation level (RR, RC or SER)", key, value)
		}
		o.TrxLevel = v
	case "mysql_storage_engine", "engine":
		if !identifier(value) {
			return fmt.Errorf("%s: %q is not a storage engine name", key, value)
		}
		o.Engine = value
	case "mysql_table_options":
		o.TableOptions = value
	case "enable_purge":
		return setYesNo(&o.EnablePurge, key, value)
	case "splittable":
		return setYesNo(&o.Splittable, key, value)
	case "keying":
		return setFlag(&o.Keying, key, value)
	case "check":
		return setFlag(&o.CheckAfter, key, value)
	case "insert_load":
		return setFlag(&o.InsertLoad, key, value)
	case "mix":
		mix, err := parseMix(value)
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		o.Mix = mix
		return nil
	default:
		return &UnknownOptionError{Name: name}
	}
	return nil
}

// UnknownOptionError is an option the TPC-C workload does not read.
type UnknownOptionError struct{ Name string }

func (e *UnknownOptionError) Error() string {
	return fmt.Sprintf("unknown tpcc option %q (tpcc reads %s)", e.Name, strings.Join(Keys, ", "))
}

// Validate returns every problem with o at once.
func (o *Options) Validate() error {
	var errs []string
	if o.Tables < 1 {
		errs = append(errs, fmt.Sprintf("tables = %d: there must be at least one table set", o.Tables))
	}
	if o.Scale < 1 {
		errs = append(errs, fmt.Sprintf("scale = %d: there must be at least one warehouse", o.Scale))
	}
	if o.Scale > 32767 {
		errs = append(errs, fmt.Sprintf("scale = %d: w_id is a smallint (at most 32767 warehouses)", o.Scale))
	}
	if o.Threads < 1 {
		errs = append(errs, fmt.Sprintf("threads = %d: at least one", o.Threads))
	}
	if _, ok := isolationLevels[o.TrxLevel]; !ok {
		errs = append(errs, fmt.Sprintf("trx_level = %q: RR, RC or SER", o.TrxLevel))
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// isolationLevels maps trx_level to the server's value.
var isolationLevels = map[string]string{"RR": "REPEATABLE-READ", "RC": "READ-COMMITTED", "SER": "SERIALIZABLE"}

// Rows is how many rows prepare loads, per table kind, for o.
func (o *Options) Rows() map[string]int64 {
	w := int64(o.Scale) * int64(o.Tables)
	t := int64(o.Tables)
	return map[string]int64{
		"warehouse":  w,
		"district":   w * DistPerWare,
		"customer":   w * DistPerWare * CustPerDist,
		"history":    w * DistPerWare * CustPerDist,
		"orders":     w * DistPerWare * CustPerDist,
		"new_orders": w * DistPerWare * (CustPerDist - firstNewOrder + 1),
		"stock":      w * MaxItems,
		"item":       t * MaxItems,
	}
}

// parseMix reads five weights: New-Order, Payment, Order-Status,
// Delivery, Stock-Level.
func parseMix(v string) ([]int, error) {
	parts := strings.Split(v, ",")
	if len(parts) != 5 {
		return nil, fmt.Errorf("%q: want five weights (new_order, payment, order_status, delivery, stock_level), e.g. \"10,10,1,1,1\"", v)
	}
	mix := make([]int, 5)
	sum := 0
	for i, p := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%q: weight %q is not a whole number >= 0", v, p)
		}
		mix[i] = n
		sum += n
	}
	if sum == 0 {
		return nil, fmt.Errorf("%q: every weight is 0", v)
	}
	return mix, nil
}

func setInt(dst *int, key, v string) error {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return fmt.Errorf("%s: %q is not a whole number", key, v)
	}
	*dst = n
	return nil
}

// setFlag reads sysbench-tpcc's 0/1 switches (true/false and on/off too).
func setFlag(dst *bool, key, v string) error {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "on", "yes":
		*dst = true
	case "0", "false", "off", "no":
		*dst = false
	default:
		return fmt.Errorf("%s: %q is not 0 or 1", key, v)
	}
	return nil
}

// setYesNo reads sysbench-tpcc's yes/no switches.
func setYesNo(dst *bool, key, v string) error {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "yes", "on", "true", "1":
		*dst = true
	case "no", "off", "false", "0":
		*dst = false
	default:
		return fmt.Errorf("%s: %q is not yes or no", key, v)
	}
	return nil
}

func identifier(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !(c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

package experiment

import (
	"time"

	"benchmatrix/oltp"
	"benchmatrix/slap"
)

// The slap workload: mysqlslap's generated (or given) SQL as a manifest
// workload, name = "slap". Its keys are mariadb-slap's long option names
// with underscores (load_type, engine, concurrency, number_of_queries,
// iterations, number_char_cols, number_int_cols,
// auto_generate_sql_add_autoincrement, ...; slap.Keys lists them), each a
// [workload] key, a scenario key or an axis. A cell runs one engine at one
// concurrency, its iterations to the end, as mysqlslap does; the
// experiment's duration bounds it (a cell still running then fails), and
// it has no warm-up (every iteration drops and creates its schema).
//
// The hooks: decode.go and IsWorkloadKey accept the keys; validate checks
// a slap parameter with slapParam/checkSlapParam and a cell with
// validateCell and optionApplies; expand gives a slap cell its Slap config
// and resolveWorkload the engine options the runner reads (threads,
// duration) from resolveSlap. The runner runs a cell with a Slap config on
// runner.Slap.

// SlapWorkload is the slap workload's name.
const SlapWorkload = "slap"

func isSlapKey(name string) bool { return slap.IsKey(name) }

// slapOnlyKey is a key only slap reads; the others it shares with the
// engine (threads, engine).
func slapOnlyKey(name string) bool {
	_, engine := oltp.CanonicalOption(name)
	return slap.IsKey(name) && !engine
}

// slapParam says slap checks this parameter's value.
func slapParam(p Param) bool {
	return (p.Name == "workload" && p.Value == SlapWorkload) || slapOnlyKey(p.Name)
}

func checkSlapParam(p Param) error {
	if p.Name == "workload" {
		return nil
	}
	c := slap.ManifestConfig()
	return c.SetKey(p.Name, p.Value)
}

// isSlapCell reports whether the workload of a cell with these parameters
// is slap (the cell's own workload parameter wins over [workload]'s).
func isSlapCell(m *Manifest, params []Param) bool {
	name := ""
	for _, ps := range [][]Param{m.Workload, params} {
		for _, p := range ps {
			if p.Name == "workload" {
				name = p.Value
			}
		}
	}
	return name == SlapWorkload
}

// resolveSlap builds a slap cell's configuration from [workload] and the
// cell's parameters, and the engine options the runner reads for it:
// threads (the concurrency), the storage engine, the duration as the
// cell's bound, no warm-up, no sbtest tables. It returns nil for a cell
// that is not slap's.
func resolveSlap(m *Manifest, params []Param) (*slap.Config, oltp.Options, error) {
	o := oltp.DefaultOptions()
	if !isSlapCell(m, params) {
		return nil, o, nil
	}
	c := slap.ManifestConfig()
	autoSet := false
	for _, ps := range [][]Param{m.Workload, params} {
		for _, p := range ps {
			if p.Name == "workload" || !slap.IsKey(p.Name) {
				continue
			}
			if err := c.SetKey(p.Name, p.Value); err != nil {
				return nil, o, err
			}
			autoSet = autoSet || p.Name == "auto_generate_sql"
		}
	}
	if err := c.Finish(autoSet); err != nil {
		return nil, o, err
	}
	o.Workload = SlapWorkload
	o.Time, o.Warmup, o.ReportInterval = m.Duration, 0, time.Second
	o.Threads = c.Concurrency[0]
	o.Tables, o.TableSize = 0, 0
	o.StorageEngine = "default"
	if len(c.Engines) > 0 {
		o.StorageEngine = c.Engines[0].Name
	}
	return &c, o, nil
}

// validateCell checks a cell's option set: slap's, or the engine's.
func validateCell(c Cell) error {
	if c.Slap != nil {
		return c.Slap.Check()
	}
	return oltp.CheckRun(c.Workload) // the options, and what the workload needs of them
}

// optionApplies reports whether the cell's workload reads a workload
// option, and if not, which workloads do.
func optionApplies(name string, c Cell) (bool, []string) {
	switch {
	case c.Slap != nil:
		if slap.IsKey(name) {
			return true, nil
		}
		_, only := oltp.OptionApplies(name, "")
		if len(only) == 0 {
			only = oltp.Workloads()
		}
		return false, only
	case slapOnlyKey(name):
		return false, []string{SlapWorkload}
	}
	return oltp.OptionApplies(name, c.Workload.Workload)
}

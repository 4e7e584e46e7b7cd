package experiment

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"

	"benchmatrix/catalog"
)

// Load reads and decodes a manifest file (see Parse).
func Load(path string) (*Manifest, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, &Error{Path: path, Problems: []Problem{{Msg: err.Error()}}}
	}
	return Parse(path, string(src))
}

// Parse decodes manifest text onto the defaults: what the file sets, with
// the right types, in known sections and keys. Every such problem is
// reported at once, each with its key and line, in a single *Error. What
// needs the whole manifest and the flags (values, the matrix) is checked
// by Resolve.
func Parse(path, src string) (*Manifest, error) {
	var raw map[string]any
	md, err := toml.Decode(src, &raw)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, &Error{Path: path, Problems: []Problem{{Line: pe.Position.Line, Msg: "broken TOML: " + pe.Message}}}
		}
		return nil, &Error{Path: path, Problems: []Problem{{Msg: "broken TOML: " + err.Error()}}}
	}
	d := &decoder{lines: indexLines(src), order: keyOrder(md)}
	m := defaults()
	m.Path, m.Source, m.lines, m.set = path, src, d.lines, d.order
	d.decode(raw, m)
	if len(d.problems) > 0 {
		// Every problem at once: what the values say too, as written (the
		// flags cannot make a manifest with these problems valid).
		d.validate(m, catalog.Provider(m.Server.Provider))
		return nil, &Error{Path: path, Problems: sortProblems(dedupe(d.problems))}
	}
	return m, nil
}

// dedupe drops a problem reported twice (by decoding and by validation).
func dedupe(ps []Problem) []Problem {
	seen := map[Problem]bool{}
	out := ps[:0]
	for _, p := range ps {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// sortProblems orders problems by line, those without one last.
func sortProblems(ps []Problem) []Problem {
	sort.SliceStable(ps, func(i, j int) bool {
		a, b := ps[i].Line, ps[j].Line
		return a != 0 && (b == 0 || a < b)
	})
	return ps
}

type decoder struct {
	lines    map[string]int
	order    map[string]int
	problems []Problem
}

func (d *decoder) problem(key string, format string, args ...any) {
	d.problems = append(d.problems, Problem{Key: key, Line: d.line(key), Msg: fmt.Sprintf(format, args...)})
}

func (d *decoder) line(key string) int {
	for k := key; k != ""; {
		if n, ok := d.lines[k]; ok {
			return n
		}
		i := strings.LastIndex(k, ".")
		if i < 0 {
			break
		}
		k = k[:i]
	}
	return 0
}

// keys returns m's keys in file order.
func (d *decoder) keys(prefix string, m map[string]any) []string {
	keys := slices.Sorted(maps.Keys(m))
	pos := func(k string) int {
		if n, ok := d.order[join(prefix, k)]; ok {
			return n
		}
		return 1 << 30
	}
	// stable insertion sort by file position; manifests are small
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && pos(keys[j]) < pos(keys[j-1]); j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

func join(prefix, k string) string {
	if prefix == "" {
		return k
	}
	return prefix + "." + k
}

var sections = map[string]bool{"experiment": true, "server": true, "workload": true, "scenarios": true, "axes": true, "inject": true, "machines": true}

func (d *decoder) decode(raw map[string]any, m *Manifest) {
	for _, k := range d.keys("", raw) {
		if d.topologySection(k, raw[k], m) { // topology.go
			continue
		}
		if !sections[k] {
			d.problem(k, "unknown section or key (known: [experiment], [server], [server.config], [workload], [scenarios], [axes], [inject], [machines])")
			continue
		}
		t, ok := raw[k].(map[string]any)
		if !ok {
			d.problem(k, "must be a table ([%s]), not a %s", k, typeName(raw[k]))
			continue
		}
		switch k {
		case "experiment":
			d.experiment(t, m)
		case "server":
			d.server(t, m)
		case "workload":
			d.workload(t, m)
		case "scenarios":
			d.scenarios(t, m)
		case "axes":
			d.axes(t, m)
		case "inject":
			d.inject(t, m)
		case "machines":
			d.machines(t, m)
		}
	}
}

func (d *decoder) str(key string, v any) (string, bool) {
	s, ok := v.(string)
	if !ok {
		d.problem(key, "want a string, got a %s", typeName(v))
	}
	return s, ok
}

func (d *decoder) experiment(t map[string]any, m *Manifest) {
	for _, k := range d.keys("experiment", t) {
		key, v := "experiment."+k, t[k]
		switch k {
		case "name":
			if s, ok := d.str(key, v); ok {
				if !experimentNameRE.MatchString(s) {
					d.problem(key, "%q: an experiment name is a results directory's name: letters, digits, '_', '-' and '.', not starting with '.'", s)
				}
				m.Name = s
			}
		case "description":
			m.Description, _ = d.str(key, v)
		case "baseline":
			m.Baseline, _ = d.str(key, v)
		case "warmup":
			if v == "auto" {
				m.Policy.WarmupAuto = true
				continue
			}
			dur, err := ParseDuration(v)
			if err != nil {
				d.problem(key, "%v (or \"auto\": until tps is steady)", err)
				continue
			}
			m.Warmup = dur
		case "duration_cap":
			dur, err := ParseDuration(v)
			switch {
			case err != nil:
				d.problem(key, "%v", err)
			case dur < MinAutoDuration:
				d.problem(key, "must be at least %s", MinAutoDuration)
			default:
				m.Policy.DurationCap = dur
			}
		case "warmup_cap", "drain_cap":
			dur, err := ParseDuration(v)
			if err != nil {
				d.problem(key, "%v", err)
			} else if k == "warmup_cap" {
				m.Policy.WarmupCap = dur
			} else {
				m.Policy.DrainCap = dur
			}
		case "drain_pages":
			if n, ok := v.(int64); ok && n >= 0 {
				m.Policy.DrainPages = n
			} else {
				d.problem(key, "want a number of pages (0 or more)")
			}
		case "prewarm", "cold", "drain", "observe":
			b, ok := v.(bool)
			if !ok {
				d.problem(key, "want true or false, got a %s", typeName(v))
				continue
			}
			switch k {
			case "prewarm":
				m.Policy.Prewarm = b
			case "cold":
				m.Policy.Cold = b
			case "drain":
				m.Policy.Drain = b
			case "observe":
				m.Policy.Observe = b
			}
		case "duration":
			if v == "auto" {
				m.Policy.DurationAuto = true
				continue
			}
			dur, err := ParseDuration(v)
			if err != nil {
				d.problem(key, "%v (or \"auto\": as long as the noise needs, chosen after the first round)", err)
				continue
			}
			if dur == 0 {
				d.problem(key, "must be more than 0")
				continue
			}
			m.Duration = dur
		case "repeats":
			n, ok := v.(int64)
			if !ok {
				d.problem(key, "want an integer, got a %s", typeName(v))
			} else if n < 1 {
				d.problem(key, "must be at least 1 (got %d)", n)
			} else {
				m.Repeats = int(n)
			}
		case "until", "max_repeats", "budget", "precision":
			d.untilKey(key, k, v, m) // until.go
		case "exclude":
			d.exclude(key, v, m)
		case "zip":
			d.zip(key, v, m)
		case "order":
			if s, ok := d.str(key, v); ok {
				if !slices.Contains(orders, Order(s)) {
					d.problem(key, "%q: want grouped, written, shuffled or blocked", s)
				}
				m.Order = Order(s)
			}
		case "seed":
			if n, ok := v.(int64); ok {
				m.Seed = n
			} else {
				d.problem(key, "want an integer, got a %s", typeName(v))
			}
		case "cell_name":
			if s, ok := d.str(key, v); ok {
				m.CellName = s
			}
		case "pivot":
			m.Pivot, _ = d.str(key, v)
		case "expect":
			d.expect(key, v, m)
		case "stall_threshold":
			f, ok := v.(float64)
			if n, isInt := v.(int64); isInt {
				f, ok = float64(n), true
			}
			if !ok || !(f > 0 && f < 1) {
				d.problem(key, "want a fraction of the median between 0 and 1, e.g. 0.5")
				continue
			}
			m.StallThreshold = f
		case "profile", "profile_hz", "profile_seconds":
			d.profileKey(key, v, m) // profile.go
		case "slo", "slo_start", "slo_max", "slo_step", "slo_precision", "slo_retests", "slo_max_steps":
			d.sloKey(key, k, v, m) // slo.go
		case "wait_quiet":
			dur, err := ParseDuration(v)
			if err != nil {
				d.problem(key, "%v", err)
				continue
			}
			m.WaitQuiet = dur
		default:
			d.problem(key, "unknown key (known: name, description, baseline, duration, warmup, warmup_cap, repeats, until, max_repeats, budget, precision, exclude, zip, order, seed, cell_name, pivot, prewarm, cold, drain, drain_cap, drain_pages, observe, expect, stall_threshold, wait_quiet, profile, profile_hz, profile_seconds, slo, slo_start, slo_max, slo_step, slo_precision, slo_retests, slo_max_steps)")
		}
	}
}

func (d *decoder) exclude(key string, v any, m *Manifest) {
	var entries []map[string]any
	switch x := v.(type) {
	case []map[string]any:
		entries = x
	case []any:
		for i, e := range x {
			t, ok := e.(map[string]any)
			if !ok {
				d.problem(key, "entry %d: want a table such as { scenario = \"b0e0\", threads = 4 }, got a %s", i+1, typeName(e))
				continue
			}
			entries = append(entries, t)
		}
	default:
		d.problem(key, "want an array of tables, e.g. exclude = [{ scenario = \"b0e0\", threads = 4 }]")
		return
	}
	for i, t := range entries {
		if len(t) == 0 {
			d.problem(key, "entry %d is empty: it would exclude every cell", i+1)
			continue
		}
		ex := map[string]string{}
		for _, k := range slices.Sorted(maps.Keys(t)) {
			s, ok := valueText(t[k])
			if !ok {
				d.problem(key+"."+k, "want a string, number or boolean, got a %s", typeName(t[k]))
				continue
			}
			ex[k] = s
		}
		m.Exclude = append(m.Exclude, ex)
	}
}

func (d *decoder) zip(key string, v any, m *Manifest) {
	groups, ok := v.([]any)
	if !ok {
		d.problem(key, "want an array of axis-name arrays, e.g. zip = [[\"innodb_buffer_pool_size\", \"table_size\"]]")
		return
	}
	for i, g := range groups {
		names, ok := g.([]any)
		if !ok || len(names) < 2 {
			d.problem(key, "group %d: want an array of at least two axis names", i+1)
			continue
		}
		var group []string
		for _, n := range names {
			s, ok := n.(string)
			if !ok {
				d.problem(key, "group %d: axis names are strings", i+1)
				continue
			}
			group = append(group, s)
		}
		m.Zips = append(m.Zips, group)
	}
}

func (d *decoder) inject(t map[string]any, m *Manifest) {
	in := &Inject{SQL: "FLUSH TABLES WITH READ LOCK", Release: "UNLOCK TABLES"}
	for _, k := range d.keys("inject", t) {
		key, v := "inject."+k, t[k]
		switch k {
		case "every", "hold":
			dur, err := ParseDuration(v)
			if err != nil {
				d.problem(key, "%v", err)
				continue
			}
			if k == "every" {
				in.Every = dur
			} else {
				in.Hold = dur
			}
		case "sql":
			in.SQL, _ = d.str(key, v)
		case "release":
			in.Release, _ = d.str(key, v)
		default:
			d.problem(key, "unknown key (known: every, hold, sql, release)")
		}
	}
	if in.Every <= 0 {
		d.problem("inject.every", "missing or zero: how often to cause a stall, e.g. every = \"6s\"")
	} else if in.Hold >= in.Every {
		d.problem("inject.hold", "must be shorter than every (%s)", in.Every)
	}
	m.Inject = in
}

func (d *decoder) server(t map[string]any, m *Manifest) {
	for _, k := range d.keys("server", t) {
		key, v := "server."+k, t[k]
		switch k {
		case "provider":
			if s, ok := d.str(key, v); ok {
				if _, err := catalog.Lookup(s); err != nil {
					d.problem(key, "%v", err)
				}
				m.Server.Provider = catalog.ProviderName(s)
			}
		case "binary":
			m.Server.Binary, _ = d.str(key, v)
		case "tmpdir":
			m.Server.TempDir, _ = d.str(key, v)
		case "image":
			m.Server.Image, _ = d.str(key, v)
		case "dsn":
			m.Server.DSN, _ = d.str(key, v)
		case "dsns":
			d.dsns(key, v, m) // topology.go
		case "machine":
			m.Server.Machine, _ = d.str(key, v)
		case "schema":
			if s, ok := d.str(key, v); ok {
				if !varNameRE.MatchString(strings.ToLower(s)) {
					d.problem(key, "%q is not a plain schema name", s)
				}
				m.Server.Schema = s
			}
		case "config":
			ct, ok := v.(map[string]any)
			if !ok {
				d.problem(key, "must be a table ([server.config]), not a %s", typeName(v))
				continue
			}
			for _, name := range d.keys(key, ct) {
				if p, ok := d.scalar(key+"."+name, name, ct[name]); ok {
					if IsLimitKey(name) && name != MachineKey {
						m.Server.Limits = append(m.Server.Limits, p) // limits.go
						continue
					}
					if !varNameRE.MatchString(normalVar(name)) {
						d.problem(key+"."+name, "%q is not a server variable name", name)
						continue
					}
					m.Server.Config = append(m.Server.Config, p)
				}
			}
		case "cache", "cache_size":
			d.cacheKey(key, k, v, m) // cache.go
		default:
			d.problem(key, "unknown key (known: provider, binary, tmpdir, image, dsn, dsns, schema, machine, cache, cache_size, config)")
		}
	}
}

func (d *decoder) scalar(key, name string, v any) (Param, bool) {
	s, ok := valueText(v)
	if !ok {
		d.problem(key, "want a string, number or boolean, got a %s", typeName(v))
		return Param{}, false
	}
	return Param{Name: name, Value: s}, true
}

func (d *decoder) workload(t map[string]any, m *Manifest) {
	for _, k := range d.keys("workload", t) {
		key := "workload." + k
		p, ok := d.scalar(key, k, t[k])
		if !ok {
			continue
		}
		if k == "name" {
			p.Name = "workload"
		} else if !Engines.IsKey(k) { // workload.go
			d.problem(key, "unknown workload option (server variables go in [server.config], [scenarios] or [axes])")
			continue
		}
		m.Workload = append(m.Workload, p)
	}
}

func (d *decoder) scenarios(t map[string]any, m *Manifest) {
	for _, name := range d.keys("scenarios", t) {
		key := "scenarios." + name
		st, ok := t[name].(map[string]any)
		if !ok {
			d.problem(key, "a scenario is a table of parameters, e.g. %s = { sync_binlog = 1 }; got a %s", name, typeName(t[name]))
			continue
		}
		if !cellNameRE.MatchString(name) {
			d.problem(key, "scenario names may use letters, digits, '_', '-' and '.'")
		}
		sc := Scenario{Name: name}
		for _, pn := range d.keys(key, st) {
			if p, ok := d.scalar(key+"."+pn, pn, st[pn]); ok {
				sc.Params = append(sc.Params, p)
			}
		}
		m.Scenarios = append(m.Scenarios, sc)
	}
}

func (d *decoder) axes(t map[string]any, m *Manifest) {
	for _, name := range d.keys("axes", t) {
		key := "axes." + name
		arr, ok := t[name].([]any)
		if !ok {
			d.problem(key, "an axis is an array of values, e.g. %s = [1, 8]; got a %s", name, typeName(t[name]))
			continue
		}
		if len(arr) == 0 {
			d.problem(key, "an axis needs at least one value")
			continue
		}
		ax := Axis{Name: name}
		seen := map[string]bool{}
		for i, v := range arr {
			s, ok := valueText(v)
			if !ok {
				d.problem(key, "value %d: want a string, number or boolean, got a %s", i+1, typeName(v))
				continue
			}
			if seen[s] {
				d.problem(key, "value %q appears twice", s)
			}
			seen[s] = true
			ax.Values = append(ax.Values, s)
		}
		m.Axes = append(m.Axes, ax)
	}
}

var (
	varNameRE  = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)
	cellNameRE = regexp.MustCompile(`^[A-Za-z0-9_.\-]+$`)
	// experimentNameRE: a single path element, never "." or "..".
	experimentNameRE = regexp.MustCompile(`^[A-Za-z0-9_\-][A-Za-z0-9_.\-]*$`)
)

func normalVar(name string) string {
	return strings.ReplaceAll(strings.ToLower(name), "-", "_")
}

// keyOrder numbers every key path in the order the file defines it.
func keyOrder(md toml.MetaData) map[string]int {
	order := map[string]int{}
	for i, k := range md.Keys() {
		order[strings.Join(k, ".")] = i
	}
	return order
}

var (
	headerRE = regexp.MustCompile(`^\s*\[\[?\s*([^\]]+?)\s*\]\]?`)
	keyRE    = regexp.MustCompile(`^\s*("[^"]*"|[A-Za-z0-9_\-]+)\s*=`)
	inlineRE = regexp.MustCompile(`[{,]\s*("[^"]*"|[A-Za-z0-9_\-]+)\s*=`)
)

// indexLines maps dotted key paths to the line that defines them. It reads
// the text the way a person does (headers, keys at the start of a line,
// keys inside inline tables); it is only used to point at problems.
func indexLines(src string) map[string]int {
	idx := map[string]int{}
	table := ""
	lastKey := ""
	for i, line := range strings.Split(src, "\n") {
		n := i + 1
		code := stripComment(line)
		if m := headerRE.FindStringSubmatch(code); m != nil && !strings.Contains(code, "=") {
			table = strings.ReplaceAll(m[1], " ", "")
			setOnce(idx, table, n)
			continue
		}
		rest := code
		if m := keyRE.FindStringSubmatch(code); m != nil {
			lastKey = join(table, strings.Trim(m[1], `"`))
			setOnce(idx, lastKey, n)
			rest = code[len(m[0]):]
		}
		for _, m := range inlineRE.FindAllStringSubmatch(rest, -1) {
			if lastKey != "" {
				setOnce(idx, lastKey+"."+strings.Trim(m[1], `"`), n)
			}
		}
	}
	return idx
}

func setOnce(idx map[string]int, k string, n int) {
	if _, ok := idx[k]; !ok {
		idx[k] = n
	}
}

func stripComment(line string) string {
	inStr := false
	for i, r := range line {
		switch r {
		case '"', '\'':
			inStr = !inStr
		case '#':
			if !inStr {
				return line[:i]
			}
		}
	}
	return line
}

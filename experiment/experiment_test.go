package experiment

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"benchmatrix/catalog"
	"benchmatrix/oltp"
)

const flushManifest = `
[experiment]
name = "flush"
baseline = "b1e1"
duration = "30s"
warmup = "5s"

[server]
provider = "sandbox"
[server.config]
log_bin = "binlog"

[workload]
name = "oltp_insert"
tables = 1
threads = 1
auto_inc = false

[scenarios]
b1e1 = { sync_binlog = 1, innodb_flush_log_at_trx_commit = 1 }
b0e1 = { sync_binlog = 0, innodb_flush_log_at_trx_commit = 1 }
b0e0 = { sync_binlog = 0, innodb_flush_log_at_trx_commit = 0 }

[axes]
threads = [1, 8]
`

func TestParseAndExpand(t *testing.T) {
	t.Parallel()
	m, err := Parse("flush.toml", flushManifest)
	if err != nil {
		t.Fatal(err)
	}
	if m.Duration != 30*time.Second || m.Warmup != 5*time.Second || m.Baseline != "b1e1" {
		t.Fatalf("experiment = %+v", m)
	}
	if len(m.Server.Config) != 1 || m.Server.Config[0] != (Param{Name: "log_bin", Value: "binlog"}) {
		t.Fatalf("server.config = %+v", m.Server.Config)
	}
	p, err := Resolve(m, Flags{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range p.Cells {
		names = append(names, c.Name)
	}
	want := "b1e1/threads=1 b1e1/threads=8 b0e1/threads=1 b0e1/threads=8 b0e0/threads=1 b0e0/threads=8"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("cells:\n got %s\nwant %s", got, want)
	}
	c := p.Cells[3]
	if o := oltpOf(t, c); o.Threads != 8 || o.Workload != "oltp_insert" || o.AutoInc {
		t.Fatalf("cell 3 workload = %+v", c.Workload)
	}
	if len(c.Server) != 2 || c.Server[0] != (Param{Name: "sync_binlog", Value: "0"}) {
		t.Fatalf("cell 3 server = %+v", c.Server)
	}
	if strings.Join(p.Columns, ",") != "sync_binlog,innodb_flush_log_at_trx_commit,threads" {
		t.Fatalf("columns = %v", p.Columns)
	}
}

func TestRepeatsInterleave(t *testing.T) {
	t.Parallel()
	src := strings.Replace(flushManifest, `warmup = "5s"`, "warmup = \"5s\"\nrepeats = 2", 1)
	src = strings.Replace(src, "threads = [1, 8]", "threads = [1]", 1)
	m, err := Parse("x.toml", src)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := Resolve(m, Flags{})
	var got []string
	for _, c := range p.Cells {
		got = append(got, c.Scenario+"#"+string(rune('0'+c.Repeat)))
	}
	if want := "b1e1#1 b0e1#1 b0e0#1 b1e1#2 b0e1#2 b0e0#2"; strings.Join(got, " ") != want {
		t.Fatalf("order %v, want %s", got, want)
	}
}

func TestProblemsNameKeyAndLine(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, src string
		want      []string // substrings, each must appear
	}{
		{"unknown key", "[experiment]\nnme = \"x\"\n[workload]\nname = \"oltp_insert\"\n", []string{"line 2: experiment.nme: unknown key"}},
		{"unknown section", "[experimen]\n[workload]\nname = \"oltp_insert\"\n", []string{"line 1: experimen"}},
		{"unknown workload option", "[workload]\nname = \"oltp_insert\"\ntabels = 2\n", []string{"line 3: workload.tabels: unknown workload option"}},
		{"threads zero", "[workload]\nname = \"oltp_insert\"\nthreads = 0\n", []string{"line 3: workload.threads", "below the minimum 1"}},
		{"threads axis zero", "[workload]\nname = \"oltp_insert\"\n[axes]\nthreads = [1, 0]\n", []string{"line 4: axes.threads"}},
		{"bad duration", "[experiment]\nduration = \"30 parsecs\"\n[workload]\nname = \"oltp_insert\"\n", []string{"line 2: experiment.duration", "not a duration"}},
		{"wrong type", "[experiment]\nrepeats = \"two\"\n[workload]\nname = \"oltp_insert\"\n", []string{"line 2: experiment.repeats: want an integer, got a string"}},
		{"broken toml", "[experiment\nname = 1\n", []string{"line ", "broken TOML", "end table name"}},
		{"unknown baseline", "[experiment]\nbaseline = \"b9\"\n[workload]\nname = \"oltp_insert\"\n[scenarios]\nb1 = { sync_binlog = 1 }\n", []string{"line 2: experiment.baseline", "\"b9\""}},
		{"unknown workload", "[workload]\nname = \"oltp_foo\"\n", []string{"line 2: workload.name", "unknown workload \"oltp_foo\""}},
		{"missing workload", "[experiment]\nname = \"x\"\n", []string{"workload.name: missing"}},
		{"name outside runs/", "[experiment]\nname = \"../../x\"\n[workload]\nname = \"oltp_insert\"\n", []string{"line 2: experiment.name", "results directory"}},
		{"exclude naming no scenario", "[experiment]\nexclude = [{ scenario = \"b9\" }]\n[workload]\nname = \"oltp_insert\"\n[scenarios]\nb1 = { sync_binlog = 1 }\n", []string{"line 2: experiment.exclude.scenario", "\"b9\" is not a scenario"}},
		{"table_size 0 for a reading workload", "[workload]\nname = \"oltp_read_only\"\ntable_size = 0\n", []string{"oltp_read_only needs table_size >= 1"}},
		{"the sandbox listening beyond loopback", "[server.config]\nbind_address = \"0.0.0.0\"\n[workload]\nname = \"oltp_insert\"\n", []string{"line 2: server.config.bind_address: provider sandbox sets bind_address itself: it listens on 127.0.0.1 only"}},
		{"the sandbox's port as an axis", "[workload]\nname = \"oltp_insert\"\n[axes]\nport = [3306, 3307]\n", []string{"line 4: axes.port: provider sandbox sets port itself"}},
		{"name with a slash", "[experiment]\nname = \"a/b\"\n[workload]\nname = \"oltp_insert\"\n", []string{"line 2: experiment.name"}},
		{"empty axis", "[workload]\nname = \"oltp_insert\"\n[axes]\nthreads = []\n", []string{"line 4: axes.threads: an axis needs at least one value"}},
		{"scenario param bad", "[workload]\nname = \"oltp_insert\"\n[scenarios]\na = { sync_binlog = 1, rand_type = \"weird\" }\n", []string{"line 4: scenarios.a.rand_type"}},
		{"every problem at once", "[experiment]\nnme = 1\nrepeats = 0\n[workload]\nname = \"oltp_insert\"\ntabels = 1\n", []string{"line 2: experiment.nme", "line 3: experiment.repeats", "line 6: workload.tabels"}},
		{"decoding and value problems at once", "[experiment]\nnme = 1\n[workload]\nname = \"oltp_insert\"\nthreads = 0\n", []string{"line 2: experiment.nme", "line 5: workload.threads"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := resolve("m.toml", c.src)
			var me *Error
			if !errors.As(err, &me) {
				t.Fatalf("got %v, want *Error", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not mention %q:\n%s", w, err)
				}
			}
		})
	}
}

func TestExcludeZipTemplateOrder(t *testing.T) {
	t.Parallel()
	src := `
[experiment]
exclude = [{ scenario = "b0e0", threads = 4 }, { threads = 1, table_size = 2000 }]
zip = [["table_size", "innodb_buffer_pool_size"]]
cell_name = "{scenario}-t{threads}-{table_size}"
order = "written"
repeats = 2
[workload]
name = "oltp_read_only"
[scenarios]
b1e1 = { sync_binlog = 1 }
b0e0 = { sync_binlog = 0 }
[axes]
threads = [1, 4]
table_size = [1000, 2000]
innodb_buffer_pool_size = ["64M", "128M"]
`
	m, err := Parse("x.toml", src)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Resolve(m, Flags{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range p.Cells {
		if c.Repeat == 1 {
			names = append(names, c.Name)
		}
	}
	// 2 scenarios x 2 threads x 2 zipped sizes = 8, minus b0e0 t4 (2) and t1/2000 (2).
	want := "b1e1-t1-1000 b1e1-t4-1000 b1e1-t4-2000 b0e0-t1-1000"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("cells\n got %s\nwant %s", got, want)
	}
	if len(p.Cells) != 8 || p.Cells[4].Name != "b1e1-t1-1000" || p.Cells[4].Repeat != 2 {
		t.Fatalf("repeats not interleaved: %d cells, [4] = %s#%d", len(p.Cells), p.Cells[4].Name, p.Cells[4].Repeat)
	}
	c := p.Cells[2] // b1e1-t4-2000: the zip moved the buffer pool with the size
	if oltpOf(t, c).TableSize != 2000 || len(c.Server) != 2 || c.Server[1].Value != "128M" {
		t.Fatalf("zip: %+v %+v", oltpOf(t, c).TableSize, c.Server)
	}
	if !p.Cells[2].Change.Reload || p.Cells[1].Change.Reload {
		t.Fatalf("reload costs: %+v %+v", p.Cells[1].Change, p.Cells[2].Change)
	}
}

func TestGroupedOrderMinimisesRestarts(t *testing.T) {
	t.Parallel()
	src := `
[workload]
name = "oltp_read_only"
[axes]
innodb_doublewrite = ["ON", "OFF"]
sync_binlog = [0, 1]
table_size = [1000, 2000]
`
	m, err := Parse("x.toml", src)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := Resolve(m, Flags{})
	restarts, reloads := 0, 0
	for _, c := range p.Cells {
		if len(c.Change.Restart) > 0 {
			restarts++
		}
		if c.Change.Reload && !c.Change.Start {
			reloads++
		}
	}
	// Grouped by data, then startup options: 2 data shapes, each with 2
	// doublewrite settings: one reload, and at most 3 restarts.
	if reloads != 1 || restarts > 3 {
		t.Fatalf("grouped order: %d reloads, %d restarts", reloads, restarts)
	}
}

func TestShuffledOrderIsSeeded(t *testing.T) {
	t.Parallel()
	src := "[experiment]\norder = \"shuffled\"\nseed = 7\n[workload]\nname = \"oltp_read_only\"\n[axes]\nthreads = [1, 2, 3, 4, 5, 6]\n"
	m1, _ := Parse("x.toml", src)
	m2, _ := Parse("x.toml", src)
	p1, _ := Resolve(m1, Flags{})
	p2, _ := Resolve(m2, Flags{})
	for i := range p1.Cells {
		if p1.Cells[i].Name != p2.Cells[i].Name {
			t.Fatalf("same seed, different order at %d", i)
		}
	}
}

func TestMoreProblems(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ src, want string }{
		{"[experiment]\nexclude = [{ thread = 4 }]\n[workload]\nname = \"oltp_insert\"\n[axes]\nthreads = [1, 4]\n", "experiment.exclude.thread"},
		{"[experiment]\nzip = [[\"a\", \"threads\"]]\n[workload]\nname = \"oltp_insert\"\n[axes]\nthreads = [1, 4]\n", "line 2: experiment.zip"},
		{"[experiment]\ncell_name = \"{scenario}\"\n[workload]\nname = \"oltp_insert\"\n[axes]\nthreads = [1, 4]\n", "experiment.cell_name"},
		{"[experiment]\nexclude = [{ threads = 1 }]\n[workload]\nname = \"oltp_insert\"\n[axes]\nthreads = [1]\n", "the matrix is empty"},
		{"[experiment]\norder = \"random\"\n[workload]\nname = \"oltp_insert\"\n", "line 2: experiment.order"},
	} {
		_, err := resolve("m.toml", c.src)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want mention of %q", c.src, err, c.want)
		}
	}
}

// Every shipped manifest decodes, validates and expands.
func TestShippedManifestsPlan(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("../manifests/*.toml")
	if len(files) < 6 {
		t.Fatalf("found %d shipped manifests", len(files))
	}
	for _, f := range files {
		m, err := Load(f)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		p, err := Resolve(m, Flags{})
		if err != nil || len(p.Cells) == 0 {
			t.Errorf("%s: %v (%d cells)", f, err, len(p.Cells))
		}
		if !strings.HasPrefix(m.Source, "#") {
			t.Errorf("%s does not open with a comment saying what it answers", f)
		}
	}
}

func TestOptionTheWorkloadDoesNotRead(t *testing.T) {
	t.Parallel()
	_, err := resolve("m.toml", "[workload]\nname = \"oltp_insert\"\npoint_selects = 5\n")
	if err == nil || !strings.Contains(err.Error(), "line 3: workload.point_selects: oltp_insert does not read point_selects") {
		t.Fatalf("got %v", err)
	}
	// An axis over workloads: reinsert_id is fine for oltp_read_write, not
	// for oltp_point_select.
	_, err = resolve("m.toml", "[workload]\nname = \"oltp_read_write\"\nreinsert_id = \"auto\"\n[axes]\nworkload = [\"oltp_read_write\", \"oltp_point_select\"]\n")
	if err == nil || !strings.Contains(err.Error(), "oltp_point_select does not read reinsert_id") {
		t.Fatalf("got %v", err)
	}
}

// resolve parses and resolves manifest text without flags, as run and plan
// do.
func resolve(path, src string) (*Plan, error) {
	m, err := Parse(path, src)
	if err != nil {
		return nil, err
	}
	return Resolve(m, Flags{})
}

// Defaults, then the manifest, then the flags: each later one wins, and the
// manifest the caller holds is not changed.
func TestResolveOrder(t *testing.T) {
	t.Parallel()
	m, err := Parse("m.toml", "[experiment]\nduration = \"10s\"\nwarmup = \"auto\"\nrepeats = 2\n[workload]\nname = \"oltp_read_only\"\n")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Resolve(m, Flags{})
	if err != nil {
		t.Fatal(err)
	}
	if c := p.Cells[0]; c.Workload.Common().Time != 10*time.Second || c.Workload.Common().Warmup != 0 || !c.Policy.WarmupAuto ||
		c.Policy.WarmupCap != DefaultWarmupCap || !c.Policy.Drain || !c.Policy.Observe || len(p.Cells) != 2 || p.Manifest.Name != "m" {
		t.Fatalf("manifest over defaults: %+v (%d cells)", c, len(p.Cells))
	}
	zero := time.Duration(0)
	if _, err := Resolve(m, Flags{Duration: &zero}); err == nil || !strings.Contains(err.Error(), "experiment.duration: must be more than 0 (--duration too)") {
		t.Fatalf("--duration 0s: %v", err)
	}
	d, w, off := 3*time.Second, time.Second, false
	p, err = Resolve(m, Flags{Duration: &d, Warmup: &w, Repeats: 3, Observe: &off})
	if err != nil {
		t.Fatal(err)
	}
	if c := p.Cells[0]; c.Workload.Common().Time != d || c.Workload.Common().Warmup != w || c.Policy.WarmupAuto || c.Policy.Observe || len(p.Cells) != 3 {
		t.Fatalf("flags over manifest: %+v (%d cells)", c, len(p.Cells))
	}
	if m.Duration != 10*time.Second || m.Repeats != 2 || !m.Policy.WarmupAuto {
		t.Fatalf("Resolve changed the parsed manifest: %+v", m)
	}
	// A rerun keeps the stored durations unless the flags say otherwise.
	stored := append([]Cell(nil), p.Cells...)
	p, err = Resolve(m, Flags{Repeats: 3, Rerun: stored})
	if err != nil || p.Cells[2].Workload.Common().Time != d {
		t.Fatalf("rerun: %v, %+v", err, p.Cells[2].Workload)
	}
}

// What a provider cannot do or does not read is refused at plan time,
// naming both.
func TestProviderCapabilitiesAndKeys(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		src   string
		flags Flags
		want  string
	}{
		{"[experiment]\ncold = true\n[server]\nprovider = \"external\"\ndsn = \"u@tcp(h:3306)/s\"\n[workload]\nname = \"oltp_read_only\"\n",
			Flags{}, `line 2: experiment.cold: cold = true needs the "restarts" capability, which provider external lacks`},
		{"[workload]\nname = \"oltp_read_only\"\n[axes]\nimage = [\"a:1\", \"b:2\"]\n",
			Flags{}, `line 4: axes.image: an image parameter needs the "images" capability, which provider sandbox lacks`},
		{"[server]\ndsn = \"u@tcp(h:3306)/s\"\n[workload]\nname = \"oltp_read_only\"\n",
			Flags{}, "line 2: server.dsn: provider sandbox does not read it"},
		{"[workload]\nname = \"oltp_read_only\"\n",
			Flags{Provider: "external"}, "server.dsn: provider external needs a server"},
		{"[workload]\nname = \"oltp_read_only\"\n",
			Flags{Provider: "kubernetes"}, `--provider: unknown provider "kubernetes" (sandbox, docker, external)`},
		{"[server]\nprovider = \"dockr\"\n[workload]\nname = \"oltp_read_only\"\n",
			Flags{}, `line 2: server.provider: unknown provider "dockr"`},
	} {
		m, err := Parse("m.toml", c.src)
		if err == nil {
			_, err = Resolve(m, c.flags)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q %+v:\n got %v\nwant %s", c.src, c.flags, err, c.want)
		}
	}
	// The image axis is fine once the provider is docker (by flag, too).
	m, _ := Parse("m.toml", "[workload]\nname = \"oltp_read_only\"\n[axes]\nimage = [\"a:1\", \"b:2\"]\n")
	if p, err := Resolve(m, Flags{Provider: "docker"}); err != nil || p.Cells[1].Image != "b:2" || !p.Cells[1].Change.Start {
		t.Fatalf("docker image axis: %v", err)
	}
}

// Restart decisions come from the flavor when it is known; a variable
// restart-only on one flavor only is marked as depending on it otherwise.
func TestRestartDecisionsByFlavor(t *testing.T) {
	t.Parallel()
	m, err := Parse("m.toml", "[experiment]\norder = \"written\"\n[workload]\nname = \"oltp_read_only\"\n[axes]\ninnodb_log_file_size = [\"48M\", \"96M\"]\n")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		flavor catalog.Flavor
		want   string
	}{{catalog.MariaDB, "set"}, {catalog.MySQL, "restart"}, {"", "restart?"}} {
		p, err := Resolve(m, Flags{Flavor: c.flavor})
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Cells[1].Change.Cost(); got != c.want {
			t.Errorf("flavor %q: second cell costs %s, want %s", c.flavor, got, c.want)
		}
		if q := p.ForTarget(catalog.Target{Flavor: catalog.MySQL}); q.Cells[1].Change.Cost() != "restart" || p.Cells[1].Change.Cost() != c.want {
			t.Errorf("ForTarget: %s, and the original became %s", q.Cells[1].Change.Cost(), p.Cells[1].Change.Cost())
		}
	}
}

// A DSN's database is the schema, unless [server] schema says another.
func TestSchemaFromDSN(t *testing.T) {
	t.Parallel()
	m, _ := Parse("m.toml", "[server]\nprovider = \"external\"\n[workload]\nname = \"oltp_read_only\"\n")
	p, err := Resolve(m, Flags{DSN: "u@tcp(h:3306)/shop"})
	if err != nil || p.Manifest.Server.Schema != "shop" {
		t.Fatalf("schema %q, %v", p.Manifest.Server.Schema, err)
	}
	m, _ = Parse("m.toml", "[server]\nprovider = \"external\"\nschema = \"bench\"\n[workload]\nname = \"oltp_read_only\"\n")
	if _, err := Resolve(m, Flags{DSN: "u@tcp(h:3306)/shop"}); err == nil || !strings.Contains(err.Error(), `line 3: server.schema: "bench", but the DSN names the database "shop"`) {
		t.Fatalf("conflict: %v", err)
	}
	if p, err := Resolve(m, Flags{DSN: "u@tcp(h:3306)/"}); err != nil || p.Manifest.Server.Schema != "bench" {
		t.Fatalf("no database in the DSN: %v", err)
	}
}

// oltpOf is a cell's oltp options (the test fails for another engine's).
func oltpOf(t *testing.T, c Cell) oltp.Options {
	t.Helper()
	o, ok := c.Workload.Options.(oltp.Options)
	if !ok {
		t.Fatalf("cell %s: workload %T, not oltp's", c.Name, c.Workload.Options)
	}
	return o
}

package experiment

import (
	"errors"
	"strings"
	"testing"

	"benchmatrix/catalog"
)

const limitsManifest = `
[experiment]
name = "limits"

[server]
machine = "tiny"
[server.config]
log_bin = "binlog"
cpus = 1.5

[machines.tiny]
disk_write_iops = 100
memory = "1G"

[workload]
name = "oltp_insert"

[scenarios]
a = { disk_write_iops = 50 }
b = { machine = "slow-disk" }

[axes]
memory = ["2G", "512M"]
`

// Limits come from the machine, then [server.config], then the cell's
// own keys; they never become server variables; a limit change costs
// "limits" and a memory limit that shrinks restarts the server.
func TestLimitsResolveOntoCells(t *testing.T) {
	p, err := resolve("limits.toml", limitsManifest)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Cell{}
	for _, c := range p.Cells {
		byName[c.Name] = c
		for _, s := range c.Server {
			if IsLimitKey(s.Name) {
				t.Errorf("cell %s: limit %s became a server variable", c.Name, s.Name)
			}
		}
	}
	for _, s := range p.Manifest.Server.Config {
		if IsLimitKey(s.Name) {
			t.Errorf("[server.config] %s stayed a startup option", s.Name)
		}
	}
	a := byName["a/memory=2G"].Limits
	if want := (catalog.LimitSet{DiskWriteIOPS: 50, CPUs: 1.5, Memory: 2 << 30}); a != want {
		t.Errorf("a/memory=2G: limits %+v, want %+v", a, want)
	}
	b := byName["b/memory=512M"].Limits
	if want := (catalog.LimitSet{DiskWriteIOPS: 100, DiskReadIOPS: 200, CPUs: 1.5, Memory: 512 << 20}); b != want {
		t.Errorf("b/memory=512M: limits %+v, want %+v", b, want)
	}
	if byName["b/memory=512M"].Machine != "slow-disk" || byName["a/memory=2G"].Machine != "tiny" {
		t.Errorf("machines: %q, %q", byName["b/memory=512M"].Machine, byName["a/memory=2G"].Machine)
	}
	var sawLimits, sawShrink bool
	for _, c := range p.Cells[1:] {
		for _, r := range c.Change.Restart {
			sawShrink = sawShrink || r.Name == "memory"
		}
		if len(c.Change.Limits) > 0 {
			sawLimits = true
			if !strings.Contains(c.Change.Cost(), "limits") {
				t.Errorf("cell %s: cost %q does not say limits", c.Name, c.Change.Cost())
			}
		}
	}
	if !sawLimits || !sawShrink {
		t.Errorf("want a live limit change and a restart for a shrinking memory limit: %v %v", sawLimits, sawShrink)
	}
}

// Bad limits are refused with key and line, every problem at once.
func TestLimitProblems(t *testing.T) {
	cases := []struct {
		name, src string
		flags     Flags
		want      []string
	}{
		{"zero and negative", `
[workload]
name = "oltp_insert"
[server.config]
disk_write_iops = 0
[scenarios]
a = { cpus = -1 }
b = { memory = "0" }
`, Flags{}, []string{"line 5: server.config.disk_write_iops: must be more than 0", "line 7: scenarios.a.cpus: must be more than 0",
			"line 8: scenarios.b.memory: must be more than 0"}},
		{"unknown preset", `
[workload]
name = "oltp_insert"
[axes]
machine = ["nvme", "no-such"]
`, Flags{}, []string{`line 5: axes.machine: unknown machine "no-such" (known: nvme, shared-storage, slow-disk, small-cloud)`}},
		{"external cannot", `
[server]
provider = "external"
dsn = "u@tcp(127.0.0.1:1)/"
machine = "slow-disk"
[workload]
name = "oltp_insert"
[axes]
disk_read_bps = ["10M"]
`, Flags{}, []string{`line 5: server.machine: machine = "slow-disk" needs the "limits" capability, which provider external lacks`,
			`line 9: axes.disk_read_bps: disk_read_bps = 10M needs the "limits" capability`}},
		{"missing cpus", `
[workload]
name = "oltp_insert"
[scenarios]
a = { server_cpus = "0,4096" }
[machines.big]
client_cpus = "9999"
`, Flags{}, []string{"line 5: scenarios.a.server_cpus: this machine has no CPU 4096", "line 6: machines.big: this machine has no CPU 9999"}},
		{"memory below the server", `
[workload]
name = "oltp_insert"
[server.config]
innodb_buffer_pool_size = "1G"
[machines.small]
memory = "1G"
[axes]
machine = ["small"]
`, Flags{}, []string{"line 7: machines.small.memory: cell machine=small: memory = 1G is below what the server needs to start: innodb_buffer_pool_size 1G plus about 128M"}},
		{"bad machine table", `
[workload]
name = "oltp_insert"
[machines.x]
disk_write_iops = 10
threads = 4
`, Flags{}, []string{"line 6: machines.x.threads: unknown limit"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := Parse("m.toml", c.src)
			if err == nil {
				_, err = Resolve(m, c.flags)
			}
			var me *Error
			if !errors.As(err, &me) {
				t.Fatalf("want a manifest error, got %v", err)
			}
			if me.ExitCode() != 2 {
				t.Errorf("exit code %d", me.ExitCode())
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("missing %q in:\n%v", w, err)
				}
			}
		})
	}
}

func TestLimitChanges(t *testing.T) {
	ch, shrink := LimitChanges(catalog.LimitSet{Memory: 2 << 30, CPUs: 1}, catalog.LimitSet{Memory: 4 << 30})
	if shrink || len(ch) != 2 || ch[0] != (Param{Name: "cpus", Value: "(none)"}) {
		t.Errorf("grow: %v %v", ch, shrink)
	}
	if _, shrink := LimitChanges(catalog.LimitSet{}, catalog.LimitSet{Memory: 4 << 30}); !shrink {
		t.Error("a new memory limit on a running server must restart it")
	}
}

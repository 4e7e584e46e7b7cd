package experiment

import (
	"strings"
	"testing"
	"time"
)

const profileManifest = `
[experiment]
name = "p"
baseline = "b1"
profile = "both"
profile_hz = 199
profile_seconds = "10s"

[workload]
name = "oltp_insert"

[scenarios]
b1 = { sync_binlog = 1 }
b0 = { sync_binlog = 0, profile = "cpu" }
`

// Every profiled cell gets an unprofiled twin right after it, both named by
// their profile; the profiling keys never become server variables.
func TestProfileTwins(t *testing.T) {
	p, err := resolve("p.toml", profileManifest)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range p.Cells {
		names = append(names, c.Name)
		for _, s := range c.Server {
			if IsProfileKey(s.Name) {
				t.Errorf("%s: %s became a server variable", c.Name, s.Name)
			}
		}
		if v, _ := paramOf(c.Params, "profile"); v == "" {
			t.Errorf("%s has no profile column value", c.Name)
		}
	}
	want := "b1/profile=both b1/profile=off b0/profile=cpu b0/profile=off"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("cells %s, want %s", got, want)
	}
	b1, twin, b0 := p.Cells[0].Policy.Profile, p.Cells[1].Policy.Profile, p.Cells[2].Policy.Profile
	if b1.Mode != ProfileBoth || b1.Hz != 199 || b1.Window != 10*time.Second || !b1.CPU() || !b1.OffCPU() {
		t.Errorf("b1: %+v", b1)
	}
	if twin.On() || !twin.Twin {
		t.Errorf("twin: %+v", twin)
	}
	if b0.Mode != ProfileCPU || b0.OffCPU() {
		t.Errorf("b0: %+v", b0)
	}
	if p.Cells[1].Change.Cost() != "reload+set" && p.Cells[1].Change.Cost() != "set" {
		t.Errorf("the twin's change: %s", p.Cells[1].Change.Cost())
	}
	if !strings.Contains(strings.Join(p.Columns, ","), "profile") {
		t.Errorf("columns %v lack profile", p.Columns)
	}
}

func paramOf(ps []Param, name string) (string, bool) {
	for _, p := range ps {
		if p.Name == name {
			return p.Value, true
		}
	}
	return "", false
}

// profile as an axis with "off" among its values: that cell is the twin,
// none is added.
func TestProfileAxisHasItsOwnTwin(t *testing.T) {
	p, err := resolve("p.toml", "[workload]\nname = \"oltp_insert\"\n[axes]\nprofile = [\"off\", \"offcpu\"]\n")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range p.Cells {
		names = append(names, c.Name)
	}
	if got := strings.Join(names, " "); got != "profile=off profile=offcpu" {
		t.Errorf("cells %s", got)
	}
}

func TestProfileProblems(t *testing.T) {
	cases := []struct {
		name, src, want string
	}{
		{"mode", "[experiment]\nprofile = \"flame\"\n[workload]\nname = \"oltp_insert\"\n",
			`line 2: experiment.profile: "flame": want off, cpu`},
		{"hz", "[experiment]\nprofile_hz = 0\n[workload]\nname = \"oltp_insert\"\n",
			"line 2: experiment.profile_hz: \"0\": want a sampling rate"},
		{"window", "[experiment]\nduration = \"10s\"\nprofile = \"cpu\"\nprofile_seconds = \"20s\"\n[workload]\nname = \"oltp_insert\"\n",
			"line 4: experiment.profile_seconds: 20s is longer than the measured window (duration 10s)"},
		{"external", "[experiment]\nprofile = \"cpu\"\n[server]\nprovider = \"external\"\ndsn = \"u@tcp(db.example:3306)/\"\n[workload]\nname = \"oltp_insert\"\n",
			`line 2: experiment.profile: profile = "cpu" needs the "profiles" capability, which provider external lacks`},
		{"axis on external", "[server]\nprovider = \"external\"\ndsn = \"u@tcp(db.example:3306)/\"\n[workload]\nname = \"oltp_insert\"\n[axes]\nprofile = [\"off\", \"both\"]\n",
			`line 7: axes.profile: profile = "both" needs the "profiles" capability`},
		{"scenario value", "[workload]\nname = \"oltp_insert\"\n[scenarios]\na = { profile = \"yes\" }\n",
			`line 4: scenarios.a.profile: "yes": want off`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := resolve("p.toml", c.src)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v\nwant %q", err, c.want)
			}
		})
	}
}

// The twin runs second in odd rounds and first in even ones.
func TestProfileTwinsAlternate(t *testing.T) {
	src := strings.Replace(profileManifest, "name = \"p\"", "name = \"p\"\nrepeats = 2", 1)
	p, err := resolve("p.toml", src)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range p.Cells {
		names = append(names, c.Name)
	}
	want := "b1/profile=both b1/profile=off b0/profile=cpu b0/profile=off b1/profile=off b1/profile=both b0/profile=off b0/profile=cpu"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("order\n%s\nwant\n%s", got, want)
	}
}

// profile as an axis without "off": one twin per combination of the other
// parameters, named like the axis cells.
func TestProfileAxisTwinName(t *testing.T) {
	p, err := resolve("p.toml", "[workload]\nname = \"oltp_insert\"\n[axes]\nprofile = [\"cpu\", \"offcpu\"]\nthreads = [1, 2]\n")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range p.Cells {
		names = append(names, c.Name)
	}
	want := "profile=cpu/threads=1 profile=off/threads=1 profile=cpu/threads=2 profile=off/threads=2 profile=offcpu/threads=1 profile=offcpu/threads=2"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("cells\n%s\nwant\n%s", got, want)
	}
}

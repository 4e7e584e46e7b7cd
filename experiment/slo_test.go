package experiment

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

const sloManifest = `
[experiment]
name = "cap"
baseline = "b1e1"
duration = "20s"
slo = "p99 < 50ms"
slo_start = 200
slo_step = "2s"
slo_retests = 1
expect = ["capacity(b0e0) > 2 * capacity(b1e1)"]

[workload]
name = "oltp_insert"
threads = 1

[scenarios]
b1e1 = { sync_binlog = 1, innodb_flush_log_at_trx_commit = 1 }
b0e0 = { sync_binlog = 0, innodb_flush_log_at_trx_commit = 0 }
fixed = { sync_binlog = 0, rate = 500 }
strict = { sync_binlog = 0, slo = "p99.9 < 5ms, errors < 0.1%" }
none = { sync_binlog = 0, slo = "off" }
`

func TestSLOKeys(t *testing.T) {
	p, err := resolve("cap.toml", sloManifest)
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]Cell{}
	for _, c := range p.Cells {
		by[c.Name] = c
		for _, s := range c.Server {
			if IsSLOKey(s.Name) {
				t.Errorf("%s: slo became a server variable", c.Name)
			}
		}
	}
	b1 := by["b1e1"]
	if b1.Policy.SLO == nil || b1.Policy.SLO.Target.String() != "p99 < 50ms" || !b1.Searches() {
		t.Fatalf("b1e1: %+v", b1.Policy.SLO)
	}
	cfg := b1.Policy.SLO.Config(b1.Workload.Common().Time)
	if cfg.Start != 200 || cfg.StepMin != 2*time.Second || cfg.Retests != 1 {
		t.Errorf("b1e1's search: %+v", cfg)
	}
	if c := by["fixed"]; c.Searches() || c.Policy.SLO == nil {
		t.Errorf("fixed (rate = 500) searches %v, target %v: want judged, not searched", c.Searches(), c.Policy.SLO)
	}
	if c := by["strict"]; c.Policy.SLO == nil || c.Policy.SLO.Target.String() != "p99.9 < 5ms, errors < 0.1%" || c.Policy.SLO.Start != 200 {
		t.Errorf("strict: %+v", c.Policy.SLO)
	}
	if c := by["none"]; c.Policy.SLO != nil || c.SLOEstimate() != 0 {
		t.Errorf("none: %+v", c.Policy.SLO)
	}
	// The plan counts the search's steps in its estimate and says so.
	if b1.SLOEstimate() <= 0 {
		t.Errorf("no search time in the estimate")
	}
	var buf bytes.Buffer
	if err := p.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"capacity at p99 < 50ms: about ", "steps of 2s-20s from 200/s, the candidate's 1 retests 20s each", "judged at 500/s against p99 < 50ms"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("plan lacks %q:\n%s", want, buf.String())
		}
	}
	without, err := resolve("cap.toml", strings.Replace(sloManifest, `slo = "p99 < 50ms"`, "", 1))
	if err != nil {
		t.Fatal(err)
	}
	if !(p.Estimate() > without.Estimate()) {
		t.Errorf("estimate with searches %v, without %v", p.Estimate(), without.Estimate())
	}
}

func TestSLOExpectation(t *testing.T) {
	e, err := ParseExpect("capacity(b0e0) > 2 * capacity(b1e1)")
	if err != nil {
		t.Fatal(err)
	}
	if e.Column != "capacity" || e.Terms[0].Name != "b0e0" || e.Terms[1].Name != "b1e1" || e.Terms[1].Factor != 2 {
		t.Errorf("%+v", e)
	}
	for _, c := range []struct{ in, want string }{
		{"capacity(b0e0) > b1e1", "write every side as capacity(name)"},
		{"b0e0 > capacity(b1e1)", "write every side as capacity(name)"},
		{"capacity(b0e0) > tps(b1e1)", "compare different columns"},
		{"speed(b0e0) > speed(b1e1)", `unknown column "speed"`},
		{"capacity() > capacity(b1e1)", "want column(name)"},
		{"lat_p99_ms: capacity(a) > capacity(b)", "the prefix says lat_p99_ms"},
	} {
		if _, err := ParseExpect(c.in); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseExpect(%q) = %v, want %q", c.in, err, c.want)
		}
	}
}

func TestSLOProblems(t *testing.T) {
	w := "[workload]\nname = \"oltp_insert\"\n"
	cases := []struct{ name, src, want string }{
		{"target", "[experiment]\nslo = \"p99 > 5ms\"\n" + w, `line 2: experiment.slo: "p99 > 5ms": "p99 > 5ms" has no "<"`},
		{"type", "[experiment]\nslo = 5\n" + w, "line 2: experiment.slo: want a string"},
		{"start", "[experiment]\nslo = \"p99 < 5ms\"\nslo_start = 0\n" + w, "line 3: experiment.slo_start: want a rate"},
		{"step", "[experiment]\nslo = \"p99 < 5ms\"\nslo_step = \"10ms\"\n" + w, "line 3: experiment.slo_step: want a step length"},
		{"retests", "[experiment]\nslo = \"p99 < 5ms\"\nslo_retests = 11\n" + w, "line 3: experiment.slo_retests: want an integer from 0 to 10"},
		{"start above max", "[experiment]\nslo = \"p99 < 5ms\"\nslo_start = 500\nslo_max = 100\n" + w, "line 3: experiment.slo_start: 500/s is above slo_max (100/s)"},
		{"tuning alone", "[experiment]\nslo_precision = 0.2\n" + w, "line 2: experiment.slo_precision: tunes the capacity search, but no slo is set"},
		{"scenario", w + "[scenarios]\na = { slo = \"p99 < 5 parsecs\" }\n", `line 4: scenarios.a.slo: "p99 < 5 parsecs": latency bound`},
		{"axis", w + "[axes]\nslo = [\"p99 < 5ms\", \"p101 < 5ms\"]\n", "line 4: axes.slo: \"p101 < 5ms\""},
		{"slap", "[experiment]\nslo = \"p99 < 5ms\"\n[workload]\nname = \"slap\"\nquery = \"SELECT 1\"\n", "experiment.slo: cell"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := resolve("s.toml", c.src)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v\nwant %q", err, c.want)
			}
		})
	}
}

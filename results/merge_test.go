package results

import (
	"bytes"
	"encoding/csv"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"benchmatrix/engine"
	"benchmatrix/record"
	"benchmatrix/shard"
)

// shardDirs writes n synthetic shard runs of a flush-like plan (3 cells ×
// rounds repeats, round k in shard (k-1)%n+1, as shard.Assign does) and
// returns their directories; edit changes a shard's run before writing.
func shardDirs(t *testing.T, n, rounds int, edit func(k int, r *record.Run)) []string {
	t.Helper()
	base := flushRun("", map[string][]float64{
		"b1e1": make([]float64, rounds), "b0e1": make([]float64, rounds), "b0e0": make([]float64, rounds),
	})
	var plan []record.PlanCell
	for _, c := range base.Cells {
		plan = append(plan, record.PlanCell{Index: c.Index, Name: c.Name, Scenario: c.Scenario, Repeat: c.Repeat})
	}
	root := t.TempDir()
	var dirs []string
	for k := 1; k <= n; k++ {
		r := *base
		r.Tool = record.Tool{Name: "benchmatrix", Version: "v-test"}
		r.ManifestHash = "aaaa"
		r.Host = record.Host{Hostname: "host" + string(rune('0'+k)), Cores: 2}
		r.Status = record.StatusFinished
		r.Started = time.Date(2026, 1, 1, 0, 0, k, 0, time.UTC)
		r.Finished = r.Started.Add(time.Minute)
		r.Shard = &record.ShardRecord{K: k, N: n, PlanSHA256: "pppp", PlanRuns: len(plan)}
		r.Cells, r.Plan = nil, nil
		for i, c := range base.Cells {
			if (c.Repeat-1)%n+1 != k {
				continue
			}
			c.Result = &engine.Result{Elapsed: 10 * time.Second, Events: int64(1000 * (c.Repeat + k))}
			c.Intervals = []engine.Interval{{End: time.Second, Events: int64(k)}}
			r.Cells = append(r.Cells, c)
			r.Plan = append(r.Plan, plan[i])
		}
		if edit != nil {
			edit(k, &r)
		}
		dir := filepath.Join(root, "shard"+string(rune('0'+k)))
		w, err := Create(dir, r.Columns, r.MetricColumns)
		if err != nil {
			t.Fatal(err)
		}
		for i := range r.Cells {
			if err := w.AppendCell(&r.Cells[i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.WriteRun(&r); err != nil {
			t.Fatal(err)
		}
		w.Close()
		dirs = append(dirs, dir)
	}
	return dirs
}

func TestMerge(t *testing.T) {
	dirs := shardDirs(t, 3, 3, nil)
	out := filepath.Join(t.TempDir(), "merged")
	m, err := Merge(out, dirs, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Cells) != 9 || len(m.Plan) != 9 || m.Shard.Partial || len(m.Shard.Merged) != 3 {
		t.Fatalf("merged %d cells, %d plan, record %+v", len(m.Cells), len(m.Plan), m.Shard)
	}
	for i, c := range m.Cells {
		if c.Index != i || m.Plan[i].Index != i {
			t.Errorf("cell %d has index %d (plan %d): not in plan order", i, c.Index, m.Plan[i].Index)
		}
		if want := "host" + string(rune('0'+c.Repeat)); c.Host != want || c.Shard != c.Repeat {
			t.Errorf("%s #%d: host %q shard %d, want %q", c.Name, c.Repeat, c.Host, c.Shard, want)
		}
	}
	if m.Host.Hostname != "host1, host2, host3" {
		t.Errorf("merged host %q", m.Host.Hostname)
	}
	back, err := ReadRun(out)
	if err != nil || len(back.Cells) != 9 {
		t.Fatalf("read back: %v", err)
	}
	for _, f := range []string{CellsFile, IntervalsFile} {
		b, _ := os.ReadFile(filepath.Join(out, f))
		rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
		if err != nil || len(rows) != 10 {
			t.Errorf("%s: %d rows (%v), want header + 9", f, len(rows), err)
			continue
		}
		for i, row := range rows[1:] {
			if row[0] != m.Cells[i].Name {
				t.Errorf("%s row %d is %s, want %s", f, i+1, row[0], m.Cells[i].Name)
			}
		}
	}
	md, _ := os.ReadFile(filepath.Join(out, SummaryFile))
	if !strings.Contains(string(md), "merged from 3 shards on 3 hosts") || !strings.Contains(string(md), "the machine is a unit of replication") {
		t.Errorf("summary.md does not say how the machines count:\n%s", md)
	}
	// The merged run is resumable as a whole-plan run: Reopen accepts it.
	w, err := Reopen(out, back)
	if err != nil {
		t.Errorf("Reopen merged: %v", err)
	} else {
		w.Close()
	}
	// The shard directories are left as they were.
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, SummaryFile)); err == nil {
			t.Errorf("%s: merge wrote into a shard directory", d)
		}
	}
}

func TestMergeRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		dirs func(t *testing.T) []string
		opt  MergeOptions
		want []string
	}{
		{"another manifest", func(t *testing.T) []string {
			return shardDirs(t, 2, 2, func(k int, r *record.Run) {
				if k == 2 {
					r.ManifestHash = "bbbb"
				}
			})
		}, MergeOptions{}, []string{"manifest (sha256) differs", "shard1 has \"aaaa\"", "shard2 has \"bbbb\""}},
		{"another tool version", func(t *testing.T) []string {
			return shardDirs(t, 2, 2, func(k int, r *record.Run) {
				if k == 2 {
					r.Tool.Version = "v-other"
				}
			})
		}, MergeOptions{Partial: true}, []string{"tool version differs", "v-other"}},
		{"another shard count", func(t *testing.T) []string {
			a := shardDirs(t, 2, 2, nil)
			b := shardDirs(t, 3, 3, nil)
			return []string{a[0], b[1]}
		}, MergeOptions{}, []string{"shard count differs", "shard1 has 2", "shard2 has 3"}},
		{"another plan", func(t *testing.T) []string {
			return shardDirs(t, 2, 2, func(k int, r *record.Run) {
				if k == 1 {
					r.Shard.PlanSHA256 = "qqqq"
				}
			})
		}, MergeOptions{}, []string{"plan (sha256"}},
		{"another server version", func(t *testing.T) []string {
			return shardDirs(t, 2, 2, func(k int, r *record.Run) { r.Server.Version = "10.11." + string(rune('0'+k)) })
		}, MergeOptions{}, []string{"server version differs"}},
		{"a shard twice", func(t *testing.T) []string {
			d := shardDirs(t, 2, 2, nil)
			cp := filepath.Join(t.TempDir(), "copy")
			copyDirForTest(t, d[0], cp)
			return []string{d[0], cp, d[1]}
		}, MergeOptions{}, []string{"shard 1/2 given 2 times", "cell run b1e1 (repeat 1) is in two shards"}},
		{"one directory twice", func(t *testing.T) []string {
			d := shardDirs(t, 2, 2, nil)
			return []string{d[0], d[0], d[1]}
		}, MergeOptions{}, []string{"given twice"}},
		{"a missing shard", func(t *testing.T) []string {
			return shardDirs(t, 3, 3, nil)[:2]
		}, MergeOptions{}, []string{"shard 3/3 missing (--partial"}},
		{"an unfinished shard", func(t *testing.T) []string {
			return shardDirs(t, 2, 2, func(k int, r *record.Run) {
				if k == 2 {
					r.Cells, r.Status = r.Cells[:1], record.StatusInterrupted
				}
			})
		}, MergeOptions{}, []string{"shard 2/2", "has 1 of its 3 cell runs (interrupted)", "--resume"}},
		{"not a shard", func(t *testing.T) []string {
			return shardDirs(t, 1, 1, func(k int, r *record.Run) { r.Shard = nil })
		}, MergeOptions{}, []string{"not a shard run"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "merged")
			_, err := Merge(out, tc.dirs(t), tc.opt)
			var me *MergeError
			if !errors.As(err, &me) || me.ExitCode() != 2 {
				t.Fatalf("Merge = %v, want a *MergeError (exit 2)", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("a refused merge left %s", out)
			}
		})
	}
}

func TestMergePartial(t *testing.T) {
	dirs := shardDirs(t, 3, 3, nil)[:2]
	out := filepath.Join(t.TempDir(), "merged")
	m, err := Merge(out, dirs, MergeOptions{Partial: true})
	if err != nil {
		t.Fatal(err)
	}
	if !m.Shard.Partial || len(m.Shard.Missing) != 1 || m.Shard.Missing[0] != 3 || len(m.Cells) != 6 || m.Status != record.StatusInterrupted {
		t.Errorf("partial merge: %d cells, status %s, record %+v", len(m.Cells), m.Status, m.Shard)
	}
	md, _ := os.ReadFile(filepath.Join(out, SummaryFile))
	if !strings.Contains(string(md), "partial merge: 6 of the plan's 9 cell runs, shards missing: 3") {
		t.Errorf("summary.md does not mark the merge partial:\n%s", md)
	}
}

// TestShardConclusionCutRounds: rounds cut across shards make pairs of two
// machines, and the Conclusion counts them; shards on one host at the same
// time are said to have competed.
func TestShardConclusionCutRounds(t *testing.T) {
	r := flushRun("", map[string][]float64{"b1e1": {100, 110}, "b0e1": {200, 210}, "b0e0": {300, 310}})
	r.Shard = &record.ShardRecord{N: 2, PlanRuns: 6, Merged: []record.MergedShard{
		{K: 1, Host: record.Host{Hostname: "a"}, Started: time.Unix(0, 0), Finished: time.Unix(100, 0)},
		{K: 2, Host: record.Host{Hostname: "a"}, Started: time.Unix(50, 0), Finished: time.Unix(150, 0)},
	}}
	for i := range r.Cells {
		// Cut each round in two: b1e1 in shard 1, the rest in shard 2.
		r.Cells[i].Shard, r.Cells[i].Host = 2, "a"
		if r.Cells[i].Name == "b1e1" {
			r.Cells[i].Shard = 1
		}
	}
	c := Conclude(r)
	all := strings.Join(c.Warnings, "\n")
	for _, want := range []string{"4 of 4 paired rounds compare a cell and its baseline measured in different shards (rounds 1, 2",
		"shards 1, 2 ran on host a at the same time"} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings do not say %q:\n%s", want, all)
		}
	}
	var b bytes.Buffer
	WriteConclusion(&b, r)
	if !strings.Contains(b.String(), "Rounds 1, 2 ran cut across shards") {
		t.Errorf("conclusion:\n%s", b.String())
	}
}

func TestShardCompareWarnings(t *testing.T) {
	one := flushRun("", map[string][]float64{"b1e1": {100}, "b0e1": {200}, "b0e0": {300}})
	one.Host.Hostname = "solo"
	merged := flushRun("", map[string][]float64{"b1e1": {100}, "b0e1": {200}, "b0e0": {300}})
	merged.Shard = &record.ShardRecord{N: 2, Merged: []record.MergedShard{{K: 1}, {K: 2}}}
	for i := range merged.Cells {
		merged.Cells[i].Shard, merged.Cells[i].Host = 1+i%2, []string{"x", "y"}[i%2]
	}
	if w := shard.Report.CompareWarnings(one, one); w != nil {
		t.Errorf("two unsharded runs: %v", w)
	}
	w := strings.Join(shard.Report.CompareWarnings(one, merged), "")
	if !strings.Contains(w, "base on 1 host (solo), new on 2 (x, y)") {
		t.Errorf("warning %q", w)
	}
	if w := strings.Join(shard.Report.CompareWarnings(merged, merged), ""); !strings.Contains(w, "same hosts (x, y)") {
		t.Errorf("warning %q", w)
	}
}

func copyDirForTest(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(from)
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

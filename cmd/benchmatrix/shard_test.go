package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"benchmatrix/results"
)

// shardManifest is 2 scenarios × 2 thread counts, 3 repeats: 12 cell runs,
// a round per shard with 3 shards.
const shardManifest = `
[experiment]
name = "sharded"
baseline = "durable"
duration = "1s"
warmup = "0s"
repeats = 3
[workload]
name = "oltp_point_select"
tables = 1
table_size = 500
[scenarios]
durable = { innodb_flush_log_at_trx_commit = 1 }
lazy = { innodb_flush_log_at_trx_commit = 2 }
[axes]
threads = [1, 2]
`

func bm(t *testing.T, args ...string) (string, int) {
	t.Helper()
	out, err := exec.Command(binary, args...).CombinedOutput()
	return string(out), exitStatus(err)
}

// csvKeys is the (cell, repeat) of every row of a results CSV.
func csvKeys(t *testing.T, path string, repeatCol int) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if repeatCol < 0 {
		for i, h := range rows[0] {
			if h == "repeat" {
				repeatCol = i
			}
		}
	}
	var keys []string
	for _, r := range rows[1:] {
		keys = append(keys, r[0]+"#"+r[repeatCol])
	}
	return keys
}

// TestShardRunMerge runs the 3 shards of a manifest on real sandboxes,
// merges them, and checks that the merged cells.csv has exactly the plan's
// rows, that report, compare and run --rerun take the merged directory,
// and that mismatched or overlapping shards are refused.
func TestShardRunMerge(t *testing.T) {
	needServer(t)
	m := writeManifest(t, shardManifest)
	root := t.TempDir()

	out, code := bm(t, "plan", m, "--json")
	if code != 0 {
		t.Fatalf("plan: %s", out)
	}
	var plan []struct {
		Name   string `json:"name"`
		Repeat int    `json:"repeat"`
	}
	if err := json.Unmarshal([]byte(out), &plan); err != nil || len(plan) != 12 {
		t.Fatalf("plan --json: %d cell runs, %v", len(plan), err)
	}
	var want []string
	for _, c := range plan {
		want = append(want, c.Name+"#"+itoa(c.Repeat))
	}

	var dirs []string
	for k := 1; k <= 3; k++ {
		d := filepath.Join(root, "shard"+itoa(k))
		if out, code := bm(t, "run", m, "--shard", itoa(k)+"/3", "-o", d, "-q"); code != 0 {
			t.Fatalf("shard %d: exit %d\n%s", k, code, out)
		}
		r, err := results.ReadRun(d)
		if err != nil {
			t.Fatal(err)
		}
		if r.Shard == nil || r.Shard.K != k || r.Shard.N != 3 || r.Shard.PlanRuns != 12 || len(r.Cells) != 4 || r.Host.Hostname == "" {
			t.Fatalf("shard %d run.json: %d cells, shard %+v, host %q", k, len(r.Cells), r.Shard, r.Host.Hostname)
		}
		for _, c := range r.Cells {
			if c.Repeat != k {
				t.Errorf("shard %d ran %s repeat %d: not its whole round", k, c.Name, c.Repeat)
			}
		}
		dirs = append(dirs, d)
	}
	// Resuming a finished shard is a no-op; resuming it as another shard is refused.
	if out, code := bm(t, "run", m, "--shard", "1/3", "-o", dirs[0], "--resume", "-q"); code != 0 {
		t.Errorf("resume shard 1: exit %d\n%s", code, out)
	}
	if out, code := bm(t, "run", m, "--shard", "2/3", "-o", dirs[0], "--resume", "-q"); code != 2 || !strings.Contains(out, "it holds shard 1/3") {
		t.Errorf("resume shard 1 as 2/3: exit %d\n%s", code, out)
	}

	merged := filepath.Join(root, "merged")
	if out, code := bm(t, "merge", "-o", merged, dirs[2], dirs[0], dirs[1]); code != 0 {
		t.Fatalf("merge: exit %d\n%s", code, out)
	}
	got := csvKeys(t, filepath.Join(merged, results.CellsFile), -1)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("merged cells.csv rows\n%v\nwant the plan's\n%v", got, want)
	}
	// intervals.csv: the shards' rows, each once.
	var shardRows []string
	for _, d := range dirs {
		shardRows = append(shardRows, csvKeys(t, filepath.Join(d, results.IntervalsFile), 1)...)
	}
	iv := csvKeys(t, filepath.Join(merged, results.IntervalsFile), 1)
	sort.Strings(shardRows)
	sort.Strings(iv)
	if len(iv) == 0 || strings.Join(iv, " ") != strings.Join(shardRows, " ") {
		t.Errorf("merged intervals.csv rows %v, the shards' %v", iv, shardRows)
	}
	r, err := results.ReadRun(merged)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range r.Cells {
		if c.Host == "" || c.Shard != c.Repeat {
			t.Errorf("%s #%d: host %q shard %d", c.Name, c.Repeat, c.Host, c.Shard)
		}
	}
	if out, code := bm(t, "report", merged); code != 0 {
		t.Errorf("report merged: exit %d\n%s", code, out)
	}
	md, _ := os.ReadFile(filepath.Join(merged, results.SummaryFile))
	if !strings.Contains(string(md), "Machines: merged from 3 shards") {
		t.Errorf("summary.md says nothing of the shards:\n%s", md)
	}
	if out, code := bm(t, "compare", dirs[0], merged); code != 0 && code != 3 {
		t.Errorf("compare shard merged: exit %d\n%s", code, out)
	}

	// Refusals: an overlapping shard (a copy of shard 1), a shard of a
	// plan with another duration, a missing shard.
	cp := filepath.Join(root, "copy1")
	if out, err := exec.Command("cp", "-a", dirs[0], cp).CombinedOutput(); err != nil {
		t.Fatal(string(out))
	}
	other := filepath.Join(root, "other3")
	if out, code := bm(t, "run", m, "--shard", "3/3", "--duration", "2s", "-o", other, "-q"); code != 0 {
		t.Fatalf("other shard: %s", out)
	}
	for _, tc := range []struct {
		dirs []string
		want string
	}{
		{[]string{dirs[0], cp, dirs[1], dirs[2]}, "shard 1/3 given 2 times"},
		{[]string{dirs[0], dirs[1], other}, "plan (sha256"},
		{[]string{dirs[0], dirs[1]}, "shard 3/3 missing"},
	} {
		o := filepath.Join(root, "refused")
		out, code := bm(t, append([]string{"merge", "-o", o}, tc.dirs...)...)
		if code != 2 || !strings.Contains(out, tc.want) {
			t.Errorf("merge %v: exit %d, want 2 saying %q\n%s", tc.dirs, code, tc.want, out)
		}
		if _, err := os.Stat(o); err == nil {
			t.Errorf("a refused merge left %s", o)
		}
	}

	// run --rerun takes the merged directory: the whole plan on one machine.
	rerun := filepath.Join(root, "rerun")
	if out, code := bm(t, "run", "--rerun", merged, "-o", rerun, "-q"); code != 0 {
		t.Fatalf("rerun merged: exit %d\n%s", code, out)
	}
	got = csvKeys(t, filepath.Join(rerun, results.CellsFile), -1)
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("rerun of the merged run: %v", got)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestPlanShards: plan --shards prints the assignment as text, JSON and a
// GitHub Actions matrix, the same for the same manifest; impossible splits
// are exit 2.
func TestPlanShards(t *testing.T) {
	m := writeManifest(t, shardManifest)
	text, code := bm(t, "plan", m, "--shards", "3")
	if code != 0 || !strings.Contains(text, "12 cell runs over 3 shards") || !strings.Contains(text, "shard 2/3 (--shard 2/3): 4 cell runs, whole rounds 2") {
		t.Errorf("plan --shards 3: exit %d\n%s", code, text)
	}
	var gm struct {
		Include []struct {
			Shard   string `json:"shard"`
			K       int    `json:"k"`
			Runs    int    `json:"cell_runs"`
			Timeout int    `json:"timeout_minutes"`
		} `json:"include"`
	}
	out, code := bm(t, "plan", m, "--shards", "3", "--github-matrix")
	if err := json.Unmarshal([]byte(out), &gm); err != nil || code != 0 || len(gm.Include) != 3 || strings.Count(out, "\n") != 1 {
		t.Fatalf("--github-matrix: exit %d, %v\n%s", code, err, out)
	}
	for i, e := range gm.Include {
		if e.Shard != itoa(i+1)+"/3" || e.K != i+1 || e.Runs != 4 || e.Timeout < 10 {
			t.Errorf("matrix entry %d: %+v", i, e)
		}
	}
	var js struct {
		Shards     int `json:"shards"`
		Assignment []struct {
			Cells []struct {
				Repeat int `json:"repeat"`
			} `json:"cells"`
		} `json:"assignment"`
	}
	out, _ = bm(t, "plan", m, "--shards", "3", "--json")
	if err := json.Unmarshal([]byte(out), &js); err != nil || js.Shards != 3 || len(js.Assignment) != 3 || len(js.Assignment[2].Cells) != 4 || js.Assignment[2].Cells[0].Repeat != 3 {
		t.Errorf("--json: %v\n%s", err, out)
	}
	again, _ := bm(t, "plan", m, "--shards", "3", "--json")
	if again != out {
		t.Error("two plans of one manifest differ")
	}
	if out, _ := bm(t, "plan", m, "--shards", "2", "--repeats", "4"); !strings.Contains(out, "16 cell runs over 2 shards") || !strings.Contains(out, "whole rounds 1, 3") {
		t.Errorf("plan --shards 2 --repeats 4:\n%s", out)
	}
	for _, args := range [][]string{{"--shards", "13"}, {"--github-matrix"}, {"--shards", "-1"}, {"--repeats", "2"}} {
		if out, code := bm(t, append([]string{"plan", m}, args...)...); code != 2 {
			t.Errorf("plan %v: exit %d, want 2\n%s", args, code, out)
		}
	}
	if out, code := bm(t, "run", m, "--shard", "4/3"); code != 2 || !strings.Contains(out, "1 <= K <= N") {
		t.Errorf("run --shard 4/3: exit %d\n%s", code, out)
	}
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"benchmatrix/results"
	"benchmatrix/results/htmlreport/browser"
)

const htmlManifest = `
[experiment]
name = "htmlpage"
description = "A real run for the HTML report's browser test"
baseline = "durable"
duration = "2s"
warmup = "1s"
repeats = 2
[workload]
name = "oltp_read_write"
tables = 1
table_size = 500
[scenarios]
durable = { innodb_flush_log_at_trx_commit = 1 }
lazy = { innodb_flush_log_at_trx_commit = 2 }
[axes]
threads = [1, 2]
`

// A real run on sandboxes, in two shards, merged, and compared: each
// results directory's report.html (and compare --html's page) opened in
// headless Chromium, with no console error, no request, the Conclusion
// and every cell, a screenshot that is not blank, and the interactions.
func TestHTMLReportOfRealRun(t *testing.T) {
	needServer(t)
	browser.Need(t)
	m := writeManifest(t, htmlManifest)
	root := t.TempDir()
	var dirs []string
	for _, k := range []string{"1", "2"} {
		d := filepath.Join(root, "shard"+k)
		if out, code := bm(t, "run", m, "--shard", k+"/2", "-o", d, "-q"); code != 0 {
			t.Fatalf("shard %s: exit %d\n%s", k, code, out)
		}
		dirs = append(dirs, d)
	}
	merged := filepath.Join(root, "merged")
	if out, code := bm(t, append([]string{"merge", "-o", merged}, dirs...)...); code != 0 {
		t.Fatalf("merge: exit %d\n%s", code, out)
	}
	cellsOf := func(dir string) []string {
		r, err := results.ReadRun(dir)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, s := range r.Summaries() {
			names = append(names, s.Name)
		}
		return names
	}
	rep := browser.Check(t, filepath.Join(dirs[0], results.ReportFile), "real-shard1", cellsOf(dirs[0]), "Environment", "Over time")
	if len(rep.Cells) != len(cellsOf(dirs[0])) {
		t.Errorf("shard 1's legend %v, want its cells %v", rep.Cells, cellsOf(dirs[0]))
	}
	all := cellsOf(merged)
	if len(all) != 4 {
		t.Fatalf("merged run has cells %v, want 4", all)
	}
	browser.Check(t, filepath.Join(merged, results.ReportFile), "real-merged", all, "Environment", "Over time")

	// `report DIR --html` rewrites only report.html.
	if err := os.Remove(filepath.Join(merged, results.ReportFile)); err != nil {
		t.Fatal(err)
	}
	summary, _ := os.ReadFile(filepath.Join(merged, results.SummaryFile))
	if out, code := bm(t, "report", merged, "--html"); code != 0 {
		t.Fatalf("report --html: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(merged, results.ReportFile)); err != nil {
		t.Errorf("report --html: %v", err)
	}
	if again, _ := os.ReadFile(filepath.Join(merged, results.SummaryFile)); string(again) != string(summary) {
		t.Errorf("report --html changed summary.md")
	}

	// compare --html: the merged run against shard 1, differences first.
	page := filepath.Join(root, "cmp", "compare.html")
	os.MkdirAll(filepath.Dir(page), 0o755)
	out, code := bm(t, "compare", "--html", page, dirs[0], merged)
	if code != 0 && code != 3 {
		t.Fatalf("compare --html: exit %d\n%s", code, out)
	}
	var both []string
	for _, c := range cellsOf(dirs[0]) {
		both = append(both, "base: "+c)
	}
	for _, c := range all {
		both = append(both, "new: "+c)
	}
	crep := browser.Check(t, page, "real-compare", both, "Differences: new against base", "side by side")
	if i, j := strings.Index(crep.Text, "Differences"), strings.Index(crep.Text, "Over time, both runs"); i < 0 || j < 0 || i > j {
		t.Errorf("the differences are not first (at %d, the series at %d)", i, j)
	}
	// The compare page links the runs' CSVs relative to itself.
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `href="../merged/cells.csv"`) {
		t.Errorf("compare page does not link ../merged/cells.csv")
	}
}

package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	_ "modernc.org/sqlite"

	"benchmatrix/exitcode"
	"benchmatrix/server"
)

// historySandbox starts a sandbox (the binary log on) that serves the
// runs as an external server (database sbtest) and holds MariaDB
// histories; stopped when the test ends.
func historySandbox(t *testing.T) (addr string, db *sql.DB) {
	t.Helper()
	needServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sb, err := server.StartSandbox(ctx, server.SandboxConfig{Startup: []server.Setting{{Name: "log_bin", Value: "binlog"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sb.Stop(context.Background()) })
	conn, err := mysql.NewConnector(sb.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	db = sql.OpenDB(conn)
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec("CREATE DATABASE sbtest"); err != nil {
		t.Fatal(err)
	}
	return sb.Endpoint().Addr, db
}

// hbm runs the binary: its exit status, stdout and stderr.
func hbm(t *testing.T, dir string, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir, cmd.Env = dir, env
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	return exitStatus(err), o.String(), e.String()
}

// histCompareManifest: the cell under test and a control cell that keeps
// its settings in every run, 4 repeats (the fewest at which compare's U
// test can call a change significant: p = 0.029). SLOW is the commit wait
// of TestHistoryEndToEnd: each commit waits up to 100 ms for a group one
// client never forms, at most 10 tps against hundreds. The control is what
// lets compare count a worsening measured under contention on one side:
// it measures what the contention did (compare_host.go), so the collapse
// must be a regression on a busy host too.
const histCompareManifest = `
[experiment]
name = "hc"
duration = "1s"
warmup = "0s"
repeats = 4
[server.config]
innodb_flush_log_at_trx_commit = 2
[workload]
name = "oltp_insert"
table_size = 1000
threads = 1
[scenarios]
ref = { binlog_commit_wait_count = 0 }
test = SETTINGS
`

var recordedRe = regexp.MustCompile(`recorded run ([0-9a-f]{12})`)

// compare --history gives what compare gives on the kept directories (the
// same output after the line naming the base, the same exit code: a
// regression exits 3 in both), in a SQLite and in a MariaDB history; a
// base that is not there exits 2 saying what was sought; a history of the
// previous schema is migrated in place and keeps every run.
func TestCompareHistory(t *testing.T) {
	if testing.Short() {
		t.Skip("3 real runs")
	}
	addr, db := historySandbox(t)
	dsn := "root@tcp(" + addr + ")/sbtest"
	tmp := t.TempDir()
	env := append(os.Environ(), "BENCHMATRIX_HISTORY_PASSWORD=", "GITHUB_SHA=", "GITHUB_HEAD_REF=", "GITHUB_REF_NAME=", "CI_COMMIT_SHA=", "CI_COMMIT_REF_NAME=")
	run := func(name, settings string) string {
		t.Helper()
		m := filepath.Join(tmp, name+".toml")
		if err := os.WriteFile(m, []byte(strings.Replace(histCompareManifest, "SETTINGS", settings, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(tmp, name)
		if code, o, e := hbm(t, tmp, env, "run", m, "-o", out, "-q", "--provider", "external", "--dsn", dsn); code != 0 {
			t.Fatalf("run %s: exit %d\n%s%s", name, code, o, e)
		}
		return out
	}
	main1 := run("main1", "{ binlog_commit_wait_count = 0 }")
	main2 := run("main2", "{ binlog_commit_wait_count = 0 }")
	slow := run("pr", "{ binlog_commit_wait_count = 2, binlog_commit_wait_usec = 100000 }")

	// compare on the directories: what compare --history must reproduce.
	type result struct {
		code      int
		out, errs string
	}
	direct := map[string]result{}
	for _, c := range [][]string{{main2, slow}, {main1, main2}, {main1, slow}, {main2, slow, "--markdown"}} {
		code, o, e := hbm(t, tmp, env, append([]string{"compare"}, c...)...)
		direct[strings.Join(c, " ")] = result{code, o, e}
	}
	// The commit wait is a regression (exit 3), on a quiet host and on a
	// busy one alike: a fresh-clone CI run once saw 16% steal in the base's
	// repeats, and compare then did not count the collapse, because no
	// cell measured what the contention did; the ref cell does now.
	if r := direct[main2+" "+slow]; r.code != 3 || !strings.Contains(r.out, "test") {
		t.Fatalf("compare main2 pr (the commit wait): exit %d, want 3 (a regression)\n%s%s", r.code, r.out, r.errs)
	}

	myDSN := "mysql://root@" + addr + "/bm_histcmp_test"
	t.Cleanup(func() { _, _ = db.Exec("DROP DATABASE IF EXISTS bm_histcmp_test") })
	for _, h := range []string{filepath.Join(tmp, "h.db"), myDSN} {
		ids := map[string]string{}
		for _, a := range [][]string{{main1, "main", "c1"}, {main2, "main", "c2"}, {slow, "feature", "c3"}} {
			code, o, e := hbm(t, tmp, env, "history", "add", "--history", h, "--branch", a[1], "--commit", a[2], a[0])
			m := recordedRe.FindStringSubmatch(o)
			if code != 0 || m == nil {
				t.Fatalf("history add %s: exit %d\n%s%s", a[0], code, o, e)
			}
			ids[a[0]] = m[1]
		}
		// same checks compare --history ARGS against compare BASE NEW.
		same := func(args []string, base, new string, extra ...string) {
			t.Helper()
			want := direct[strings.Join(append([]string{base, new}, extra...), " ")]
			code, o, e := hbm(t, tmp, env, append(append(append([]string{"compare", "--history", h}, args...), extra...), new)...)
			header, rest, _ := strings.Cut(o, "\n\n")
			if code != want.code || rest != want.out || !strings.Contains(header, "run "+ids[base]) {
				t.Fatalf("%s: compare --history %v: exit %d, want %d, the base %s named\n--- got:\n%s%s--- want (compare %s %s):\n%s%s",
					h, args, code, want.code, ids[base], o, e, base, new, want.out, want.errs)
			}
			t.Logf("%s: compare --history %v %s: exit %d, %s", h, args, filepath.Base(new), code, header)
		}
		same(nil, main2, slow) // the newest main run: main2
		same([]string{"--base", "main"}, main2, slow, "--markdown")
		same(nil, main1, main2) // main2 is itself the newest main run
		same([]string{"--base-run", ids[main1][:6]}, main1, slow)
		code, o, e := hbm(t, tmp, env, "compare", "--history", h, "--base", "release", slow)
		if code != 2 || o != "" || !strings.Contains(e, "branch release") || !strings.Contains(e, "on branches main (2)") {
			t.Fatalf("%s: --base release: exit %d, want 2 saying what was sought and what the history holds\n%s%s", h, code, o, e)
		}
		// history export writes a stored run back out; compare and report read it.
		exp := filepath.Join(tmp, "export-"+filepath.Base(h))
		if code, o, e := hbm(t, tmp, env, "history", "export", "--history", h, ids[main2], "-o", exp); code != 0 {
			t.Fatalf("export: exit %d\n%s%s", code, o, e)
		}
		if code, o, e := hbm(t, tmp, env, "compare", exp, slow); code != direct[main2+" "+slow].code || o != direct[main2+" "+slow].out {
			t.Fatalf("compare EXPORTED pr: exit %d\n%s%s", code, o, e)
		}
		if code, o, e := hbm(t, tmp, env, "report", exp); code != 0 {
			t.Fatalf("report EXPORTED: exit %d\n%s%s", code, o, e)
		}

		// The previous schema (what schema 2 added dropped, the version
		// row gone: the runs of schema 1 as they were) is migrated in
		// place when opened; every run is still listed; comparing against
		// one recorded before says so; adding its directory again keeps it.
		old := db
		if !strings.HasPrefix(h, "mysql://") {
			var err error
			if old, err = sql.Open("sqlite", h); err != nil {
				t.Fatal(err)
			}
		}
		for _, q := range []string{"DROP TABLE bm_histcmp_test.bmh_run_json", "DELETE FROM bm_histcmp_test.bmh_schema WHERE version >= 2"} {
			if old != db {
				q = strings.ReplaceAll(q, "bm_histcmp_test.", "")
			}
			if _, err := old.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
		if old != db {
			old.Close()
		}
		code, o, e = hbm(t, tmp, env, "history", "list", "--runs", "--history", h)
		for _, id := range ids {
			if code != 0 || !strings.Contains(o, id) {
				t.Fatalf("%s migrated: exit %d, run %s missing\n%s%s", h, code, id, o, e)
			}
		}
		if strings.Count(o, "run.json not kept") != 3 {
			t.Fatalf("%s migrated: list --runs should mark the 3 runs recorded before schema 2\n%s", h, o)
		}
		code, o, e = hbm(t, tmp, env, "compare", "--history", h, slow)
		if code != 2 || !strings.Contains(e, "run "+ids[main2]+" was recorded before the history kept full runs (history schema 2") {
			t.Fatalf("%s migrated: compare against a run recorded before: exit %d\n%s%s", h, code, o, e)
		}
		t.Logf("%s migrated: %s", h, strings.TrimSpace(e))
		if code, o, e := hbm(t, tmp, env, "history", "add", "--history", h, main2); code != 0 || !strings.Contains(o, "kept now") {
			t.Fatalf("%s: adding main2 again: exit %d\n%s%s", h, code, o, e)
		}
		same(nil, main2, slow)
	}
}

// recipeSetup are the recipes' lines that set the machine up (a package
// install, the build); the test runs the binary it built instead.
var recipeSetup = map[string]bool{
	"sudo apt-get install -y mariadb-server && make build": true,
	"make build": true,
}

// recipeLines reads the shell lines of docs/history.md's recipes: every
// `run:` of the GitHub Actions workflow (the block that has `runs-on:`)
// and every item of the GitLab job's `script:`, a `|` block as one script.
func recipeLines(t *testing.T) (github, gitlab []string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "history.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(string(b), "```yaml\n")
	indent := func(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }
	for _, blk := range blocks[1:] {
		blk, _, _ = strings.Cut(blk, "```")
		lines := strings.Split(blk, "\n")
		var out []string
		inScript := -1 // the indent of the script's items
		for i := 0; i < len(lines); i++ {
			l := lines[i]
			tl := strings.TrimSpace(l)
			var cmd string
			var at int
			switch {
			case strings.HasPrefix(tl, "- run: "):
				cmd, at = strings.TrimPrefix(tl, "- run: "), indent(l)+2
			case strings.HasPrefix(tl, "run: "):
				cmd, at = strings.TrimPrefix(tl, "run: "), indent(l)
			case tl == "script:":
				inScript = indent(l)
				continue
			case inScript >= 0 && strings.HasPrefix(tl, "- ") && indent(l) > inScript:
				cmd, at = strings.TrimPrefix(tl, "- "), indent(l)+2
			default:
				if inScript >= 0 && tl != "" && indent(l) <= inScript {
					inScript = -1
				}
				continue
			}
			if cmd == "|" { // a block: the lines indented deeper than its key
				var body []string
				for i+1 < len(lines) && (strings.TrimSpace(lines[i+1]) == "" || indent(lines[i+1]) > at) {
					i++
					body = append(body, strings.TrimPrefix(lines[i], strings.Repeat(" ", at+2)))
				}
				cmd = strings.TrimSpace(strings.Join(body, "\n"))
			} else if strings.HasPrefix(cmd, `"`) || strings.HasPrefix(cmd, "'") || strings.HasPrefix(cmd, ">") {
				t.Fatalf("recipe line %q: a quoted or folded YAML scalar, which this test does not read", cmd)
			}
			out = append(out, cmd)
		}
		switch {
		case strings.Contains(blk, "runs-on:"):
			github = out
		case strings.Contains(blk, "script:"):
			gitlab = out
		}
	}
	if len(github) == 0 || len(gitlab) == 0 {
		t.Fatalf("docs/history.md: want a GitHub Actions workflow and a GitLab CI job; found %d and %d shell lines", len(github), len(gitlab))
	}
	return github, gitlab
}

// The CI recipes of docs/history.md, their shell lines as written, run
// locally against a sandbox: two nightly jobs on main, then a pull request
// (merge request) compared against the last nightly; each GitHub job in a
// fresh directory with the history file carried over as the cache would.
func TestCIRecipes(t *testing.T) {
	if testing.Short() {
		t.Skip("5 real runs")
	}
	github, gitlab := recipeLines(t)
	addr, db := historySandbox(t)
	manifest := `
[experiment]
name = "recipe"
duration = "1s"
warmup = "0s"
repeats = 3
[server]
provider = "external"
dsn = "root@tcp(` + addr + `)/sbtest"
[workload]
name = "oltp_insert"
table_size = 1000
threads = 1
`
	tmp := t.TempDir()
	var base []string // the environment without the CIs' variables
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(k, "GITHUB_") && !strings.HasPrefix(k, "CI_") && !strings.HasPrefix(k, "BENCHMATRIX_HISTORY") && k != "BENCH_HISTORY" && k != "CI" {
			base = append(base, kv)
		}
	}
	// job runs the lines in a new working directory holding bin/benchmatrix,
	// manifests/flush.toml and the files carried in; it returns the
	// directory and what the lines printed.
	job := func(name string, lines []string, env map[string]string, carry map[string]string) (string, string) {
		t.Helper()
		dir := filepath.Join(tmp, name)
		for _, d := range []string{"bin", "manifests"} {
			if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Symlink(binary, filepath.Join(dir, "bin", "benchmatrix")); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "manifests", "flush.toml"), []byte(manifest), 0o644); err != nil {
			t.Fatal(err)
		}
		for to, from := range carry {
			if b, err := os.ReadFile(from); err == nil {
				if err := os.WriteFile(filepath.Join(dir, to), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		vars := append([]string{}, base...)
		for k, v := range env {
			vars = append(vars, k+"="+strings.ReplaceAll(v, "$DIR", dir))
		}
		var all strings.Builder
		for _, l := range lines {
			if recipeSetup[l] {
				continue
			}
			cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", l)
			cmd.Dir, cmd.Env = dir, vars
			out, err := cmd.CombinedOutput()
			fmt.Fprintf(&all, "$ %s\n%s", l, out)
			if err != nil {
				t.Fatalf("%s: exit %d\n%s", name, exitStatus(err), all.String())
			}
		}
		t.Logf("%s:\n%s", name, all.String())
		return dir, all.String()
	}
	runID := func(dir string) string {
		t.Helper()
		code, o, e := hbm(t, dir, base, "history", "list", "--runs", "--history", filepath.Join(dir, "history.db"))
		if code != 0 {
			t.Fatalf("list: %d %s%s", code, o, e)
		}
		return o
	}

	// GitHub Actions: the SQLite history carried from job to job.
	gh := func(event, ref, head, sha string) map[string]string {
		return map[string]string{"CI": "true", "GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": event, "GITHUB_REF_NAME": ref,
			"GITHUB_HEAD_REF": head, "GITHUB_SHA": sha, "GITHUB_STEP_SUMMARY": "$DIR/step-summary.md"}
	}
	n1, _ := job("gh-nightly-1", github, gh("schedule", "main", "", "1111111111111111"), nil)
	n2, _ := job("gh-nightly-2", github, gh("schedule", "main", "", "2222222222222222"), map[string]string{"history.db": filepath.Join(n1, "history.db")})
	pr, _ := job("gh-pr", github, gh("pull_request", "7/merge", "feature", "3333333333333333"), map[string]string{"history.db": filepath.Join(n2, "history.db")})
	nightly, _ := os.ReadFile(filepath.Join(n2, "step-summary.md"))
	summary, _ := os.ReadFile(filepath.Join(pr, "step-summary.md"))
	if strings.Contains(string(nightly), "benchmatrix compare") {
		t.Fatalf("the nightly job compared:\n%s", nightly)
	}
	if !strings.Contains(string(summary), "base from history history.db: run ") || !strings.Contains(string(summary), "commit 2222222222222222, branch main") ||
		!strings.Contains(string(summary), "## benchmatrix compare: recipe") {
		t.Fatalf("the pull request's step summary: want the comparison against the second nightly run\n%s", summary)
	}
	if l := runID(pr); strings.Count(l, "schedule") != 2 || strings.Count(l, "pull_request") != 1 {
		t.Fatalf("the pull request's history: want 2 nightly runs and its own\n%s", l)
	}

	// GitLab CI: the shared history in a database on the sandbox.
	t.Cleanup(func() { _, _ = db.Exec("DROP DATABASE IF EXISTS bm_recipe_test") })
	gl := func(source, ref, sha string) map[string]string {
		return map[string]string{"CI": "true", "GITLAB_CI": "true", "CI_PIPELINE_SOURCE": source, "CI_COMMIT_REF_NAME": ref,
			"CI_COMMIT_SHA": sha, "CI_DEFAULT_BRANCH": "main", "BENCH_HISTORY": "mysql://root@" + addr + "/bm_recipe_test",
			"BENCHMATRIX_HISTORY_PASSWORD": ""}
	}
	job("gl-nightly-1", gitlab, gl("schedule", "main", "aaaaaaaaaaaaaaaa"), nil)
	_, out := job("gl-nightly-2", gitlab, gl("schedule", "main", "bbbbbbbbbbbbbbbb"), nil)
	if strings.Contains(out, "base from history") {
		t.Fatalf("the nightly job compared:\n%s", out)
	}
	_, out = job("gl-mr", gitlab, gl("merge_request_event", "feature", "cccccccccccccccc"), nil)
	if !strings.Contains(out, "commit bbbbbbbbbbbbbbbb, branch main") {
		t.Fatalf("the merge request's job: want the comparison against the second nightly run\n%s", out)
	}
	var runs int
	if err := db.QueryRow("SELECT COUNT(*) FROM bm_recipe_test.bmh_runs").Scan(&runs); err != nil || runs != 3 {
		t.Fatalf("the shared history holds %d runs (%v), want 3", runs, err)
	}
}

// compare's --history may come bare, with =VALUE or with its value after
// it; NEW_DIR (a directory) is never taken for its value; the base flags
// need --history, and one of them at most.
func TestTakeCompareHistory(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		args                []string
		rest                []string
		set                 bool
		target, branch, lbl string
		run                 string
	}{
		{[]string{"a", "b", "--markdown"}, []string{"a", "b", "--markdown"}, false, "", "main", "", ""},
		{[]string{"--history", dir}, []string{dir}, true, "", "main", "", ""},
		{[]string{"--history", "h.db", dir}, []string{dir}, true, "h.db", "main", "", ""},
		{[]string{"--history=mysql://u@h/db", "--base", "rel", dir, "--markdown"}, []string{dir, "--markdown"}, true, "mysql://u@h/db", "rel", "", ""},
		{[]string{"--base-label=nightly", "-history", dir}, []string{dir}, true, "", "main", "nightly", ""},
		{[]string{dir, "--history", "--base-run", "3f2a9c"}, []string{dir}, true, "", "main", "", "3f2a9c"},
	}
	for _, c := range cases {
		rest, cb, err := takeCompareHistory(c.args)
		if err != nil || strings.Join(rest, " ") != strings.Join(c.rest, " ") || cb.set != c.set || cb.target != c.target ||
			cb.branch != c.branch || cb.label != c.lbl || cb.runID != c.run {
			t.Errorf("%q: rest %q %+v %v", c.args, rest, cb, err)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--base", "main", "a", "b"}, "give --history too"},
		{[]string{"--history", "--base", "x", "--base-run", "abcd", dir}, "give one"},
		{[]string{"--history", dir, "--base"}, "--base wants a value"},
	} {
		_, _, err := takeCompareHistory(c.args)
		if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want a usage error saying %q", c.args, err, c.want)
		}
	}
	// Through the binary: exit 2 and the message.
	code, o, e := hbm(t, "", nil, "compare", "--base", "main", dir, dir)
	if code != 2 || !strings.Contains(e, "give --history too") {
		t.Errorf("compare --base without --history: exit %d\n%s%s", code, o, e)
	}
}

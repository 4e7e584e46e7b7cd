package oltp

import (
	"context"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"benchmatrix/server"
)

// cramWhole are the files of sysbench 1.0.20's cram suite (tests/t) that
// test the OLTP scripts and the command line around them, every case of
// which `benchmatrix oltp` must pass as sysbench does.
var cramWhole = []string{
	"script_oltp_read_write_mysql.t", "script_oltp_delete_mysql.t", "script_oltp_insert_mysql.t",
	"script_oltp_point_select_mysql.t", "script_select_random_mysql.t", "script_bulk_insert_mysql.t",
	"script_oltp_help.t", "commands.t",
}

// cramCases are the files that mix OLTP cases with cases of what
// benchmatrix oltp is not (sysbench's cpu and fileio tests, user Lua
// scripts, sysbench's own --help and version line): only the cases whose
// command (its `  $ ` line) is listed run, in the file's order, each with
// its expected output as sysbench's file has it. The rest, and why they
// fail, are in docs/engines.md ("sysbench's own test suite").
var cramCases = map[string][]string{
	// The second case of each runs a Lua script of its own.
	"cmd_cleanup.t": {"sysbench cleanup"},
	"cmd_help.t":    {"sysbench help"},
	"cmd_prepare.t": {"sysbench prepare"},
	"cmd_run.t":     {"sysbench run"},
	// The rest: Lua scripts from stdin or files, fileio.
	"cmdline.t": {"sysbench foo bar", "sysbench foo bar baz", "sysbench --unknown <<EOF",
		"sysbench --help foo | grep Usage:", "sysbench run <<EOF"},
	// The second case of each is `sysbench cpu`.
	"opt_report_interval.t": {`if [ -z "$SBTEST_HAS_MYSQL" ]`,
		`sysbench ${SBTEST_SCRIPTDIR}/oltp_read_write.lua --db-driver=mysql --mysql-dry-run --time=3 --events=0 --report-interval=1 run | grep '\[ 2s \]'`},
	"opt_report_checkpoints.t": {`if [ -z "$SBTEST_HAS_MYSQL" ]`,
		`sysbench ${SBTEST_SCRIPTDIR}/oltp_read_write.lua --db-driver=mysql --mysql-dry-run --time=3 --events=0 --report-checkpoints=1,2 run | egrep '(Checkpoint report|SQL statistics)'`},
	// The first wants the version line to be exactly "sysbench 1.0.20";
	// ours says what it is after the first two words, which scripts take.
	"opt_version.t": {"version=$(sysbench --version | cut -d ' ' -f 1,2)", `test "$version" = "$SBTEST_VERSION_STRING"`},
}

// cramSelect keeps the cases of a cram file whose command's first line is
// in commands (each must be there), in the file's order: a case is a
// `  $ ` line, its `  > ` continuations and the indented output lines after
// them; comments (unindented lines) are left out.
func cramSelect(text string, commands []string) (string, []string) {
	var out []string
	found := map[string]bool{}
	keep := false
	for line := range strings.SplitSeq(text, "\n") {
		switch {
		case strings.HasPrefix(line, "  $ "):
			cmd := strings.TrimPrefix(line, "  $ ")
			keep = slices.Contains(commands, cmd)
			if keep {
				found[cmd] = true
				out = append(out, "")
			}
		case !strings.HasPrefix(line, "  "):
			keep = false
			continue
		}
		if keep {
			out = append(out, line)
		}
	}
	var missing []string
	for _, c := range commands {
		if !found[c] {
			missing = append(missing, c)
		}
	}
	return strings.Join(out, "\n") + "\n", missing
}

func TestCramSelect(t *testing.T) {
	t.Parallel()
	file := "# a comment\n\n  $ sysbench a\n  out a\n  [1]\n\n# two\n  $ cat >x <<EOF\n  > body\n  > EOF\n  $ sysbench b\n  \n  out b\n  $ sysbench c\n"
	got, missing := cramSelect(file, []string{"sysbench a", "sysbench b", "sysbench d"})
	want := "\n  $ sysbench a\n  out a\n  [1]\n\n  $ sysbench b\n  \n  out b\n"
	if got != want || !slices.Equal(missing, []string{"sysbench d"}) {
		t.Errorf("got %q missing %q\nwant %q", got, missing, want)
	}
}

var cramResultRE = regexp.MustCompile(`(?m)^(\S+\.t) +(pass|FAIL|skip)$`)

// TestSysbenchCramSuite runs sysbench 1.0.20's own cram tests of the OLTP
// scripts and command line (cramWhole, cramCases) with `benchmatrix oltp`
// as sysbench, through scripts/cram-sysbench.sh against a sandbox: each
// must pass. It needs the yardsticks folder (skips, saying where it
// looked, only when that is absent), cram (python3-cram), the mariadb
// client and a server.
func TestSysbenchCramSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	src := yardstick(t, "sysbench-1.0.20")
	suite := yardstick(t, "sysbench-1.0.20/tests/t")
	root := repoRoot(t)
	for _, tool := range [][]string{{"cram3", "cram"}, {"mariadb"}} {
		if !slices.ContainsFunc(tool, func(n string) bool { _, err := exec.LookPath(n); return err == nil }) {
			t.Fatalf("%s not found: apt-get install -y python3-cram mariadb-client (scripts/ensure-deps.sh cram slap)", tool[0])
		}
	}
	if _, err := server.FindBinary(""); err != nil {
		t.Fatalf("the cram suite needs a server: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	dir := t.TempDir()
	bin := filepath.Join(dir, "benchmatrix")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/benchmatrix")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	files := append([]string{}, cramWhole...)
	for _, name := range slices.Sorted(maps.Keys(cramCases)) {
		text, err := os.ReadFile(filepath.Join(suite, name))
		if err != nil {
			t.Fatal(err)
		}
		sel, missing := cramSelect(string(text), cramCases[name])
		if len(missing) > 0 {
			t.Fatalf("%s has no case %q", name, missing)
		}
		if err := os.MkdirAll(filepath.Join(dir, "cases"), 0o755); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, "cases", name)
		if err := os.WriteFile(p, []byte(sel), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}

	sb, err := server.StartSandbox(ctx, server.SandboxConfig{Startup: []server.Setting{
		{Name: "innodb_buffer_pool_size", Value: "128M"}, {Name: "innodb_flush_log_at_trx_commit", Value: "2"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sb.Stop(context.Background()) })

	cmd := exec.CommandContext(ctx, "bash", append([]string{filepath.Join(root, "scripts", "cram-sysbench.sh"), src, "benchmatrix"}, files...)...)
	cmd.Env = append(os.Environ(), "BENCHMATRIX="+bin, "CRAM_SOCKET="+filepath.Join(sb.Dir(), "mysql.sock"), "SHOW=1", "SHOW_LINES=200", "KEEP=")
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("scripts/cram-sysbench.sh (%s):\n%s", time.Since(start).Round(time.Second), out)
	results := map[string]string{}
	for _, m := range cramResultRE.FindAllStringSubmatch(string(out), -1) {
		results[m[1]] = m[2]
	}
	for _, f := range files {
		name := filepath.Base(f)
		switch r := results[name]; r {
		case "pass":
		case "":
			t.Errorf("%s: no result from the script", name)
		default:
			t.Errorf("%s: %s with benchmatrix oltp as sysbench (the hunks are above)", name, r)
		}
	}
	if err != nil && !t.Failed() {
		t.Errorf("scripts/cram-sysbench.sh: %v", err)
	}
}

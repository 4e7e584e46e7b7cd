package docs_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"benchmatrix/cache"
	"benchmatrix/server"
)

// tourLines is the first ```sh block under "## A five-minute tour" of
// README.md: the commands a new user types.
func tourLines(t *testing.T) []string {
	t.Helper()
	front := pages(t)[0]
	start := -1
	for _, h := range front.headings() {
		if h.level == 2 && h.text == "A five-minute tour" {
			start = h.line
		}
	}
	if start < 0 {
		t.Fatal(`README.md has no "## A five-minute tour"`)
	}
	for _, b := range front.blocks() {
		if b.line > start && b.info == "sh" {
			var lines []string
			for _, l := range strings.Split(strings.TrimSpace(b.text), "\n") {
				if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
					lines = append(lines, l)
				}
			}
			return lines
		}
	}
	t.Fatal("the tour has no ```sh block")
	return nil
}

// quick is what the test adds to each run of the tour, so that it takes
// seconds: the same cells, the same server, shorter windows.
const quick = " --duration 2s --warmup 1s --max-repeats 3"

// TestTourRuns runs the README's tour as written, in a scratch directory
// holding bin/benchmatrix (built from this tree) and manifests/, with the
// runs shortened: every command must succeed and say what the tour says
// it does.
func TestTourRuns(t *testing.T) {
	lines := tourLines(t)
	want := []string{"make build", "bin/benchmatrix plan ", "bin/benchmatrix run ", "sed ", "bin/benchmatrix compare "}
	for _, w := range want {
		found := false
		for _, l := range lines {
			found = found || strings.HasPrefix(l, w)
		}
		if !found {
			t.Fatalf("the tour has no %q line; its lines: %q", w, lines)
		}
	}
	if testing.Short() {
		t.Skip("-short: the tour starts sandboxes")
	}
	if _, err := server.FindBinary(""); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI must install a server: %v", err)
		}
		t.Skip(err)
	}

	dir := t.TempDir()
	abs, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(abs, "manifests"), filepath.Join(dir, "manifests")); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), cache.EnvVar+"="+cache.Off) // never the user's data cache
	for _, l := range lines {
		var cmd *exec.Cmd
		switch {
		case l == "make build":
			// What make build does, without the version stamp.
			cmd = exec.Command("go", "build", "-o", filepath.Join(dir, "bin", "benchmatrix"), "./cmd/benchmatrix")
			cmd.Dir = abs
		case strings.HasPrefix(l, "bin/benchmatrix run "):
			cmd = exec.Command("sh", "-c", l+quick)
		default:
			cmd = exec.Command("sh", "-c", l)
		}
		if cmd.Dir == "" {
			cmd.Dir = dir
		}
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("tour line %q: %v\n%s", l, err, out)
		}
		t.Logf("$ %s\n%s", l, out)
		checkTourOutput(t, l, string(out))
	}
}

// checkTourOutput: each command printed what the tour says it prints.
func checkTourOutput(t *testing.T, line, out string) {
	t.Helper()
	var wants []string
	switch {
	case strings.HasPrefix(line, "bin/benchmatrix plan "):
		wants = []string{"9 cell run(s)", "until conclusive", "b1e1", "b0e1", "b0e0", "start+reload+set"}
	case strings.HasPrefix(line, "bin/benchmatrix run "):
		wants = []string{"tps vs b1e1", "results: runs/"}
	case strings.HasPrefix(line, "sed "):
		wants = []string{"## Conclusion", "3 rounds", "b1e1 < b0e1 < b0e0", "What undermines it"}
	case strings.HasPrefix(line, "bin/benchmatrix compare "):
		wants = []string{"b1e1", "b0e1", "b0e0", "tps", "No regressions", "too few repeats to detect a change"}
	}
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Errorf("tour line %q: its output lacks %q:\n%s", line, w, out)
		}
	}
}

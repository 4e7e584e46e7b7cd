package oltp

import (
	"os"
	"path/filepath"
	"testing"
)

// YardsticksEnv names the folder of other projects' scripts the tests run
// the real tools with (sysbench 1.0.20's cram suite, its 0.5-era OLTP
// scripts); without it the tests look at ../shared/yardsticks from the
// repository's root, where CI has it.
const YardsticksEnv = "BENCHMATRIX_YARDSTICKS"

// yardstick is path rel inside the yardsticks folder. The test skips,
// saying where it looked, only when the folder itself is absent; a folder
// that lacks rel fails it.
func yardstick(t *testing.T, rel string) string {
	t.Helper()
	dir, where := yardsticksDir(t)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Skipf("no yardsticks folder at %s (%s): set %s to the folder that holds sysbench-1.0.20/", dir, where, YardsticksEnv)
	}
	p := filepath.Join(dir, rel)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("the yardsticks folder %s (%s) lacks %s: %v", dir, where, rel, err)
	}
	return p
}

// yardsticksDir is $BENCHMATRIX_YARDSTICKS, else ../shared/yardsticks from
// the repository's root, and how it was found.
func yardsticksDir(t *testing.T) (dir, where string) {
	t.Helper()
	if d := os.Getenv(YardsticksEnv); d != "" {
		return d, "$" + YardsticksEnv
	}
	return filepath.Join(filepath.Dir(repoRoot(t)), "shared", "yardsticks"), "../shared/yardsticks from the repository's root; " + YardsticksEnv + " is unset"
}

// repoRoot is the repository's root: the folder holding go.mod, above the
// test's package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			return root
		}
		up := filepath.Dir(root)
		if up == root {
			t.Fatal("no go.mod above the test's directory: cannot find the repository's root")
		}
		root = up
	}
}

package results

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"benchmatrix/exitcode"
)

// A finished cell run whose rows were lost from cells.csv or intervals.csv
// comes back from run.json on resume, byte for byte as first written; a
// half row is dropped.
func TestReopenRestoresLostRows(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	run := writeGoldenRun(t, dir)
	for _, name := range []string{CellsFile, IntervalsFile} {
		path := filepath.Join(dir, name)
		orig, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		lines := bytes.SplitAfter(orig, []byte("\n"))
		// Lose the second data row, and leave a half row at the end.
		damaged := append(append([]byte(nil), bytes.Join(append(lines[:2:2], lines[3:]...), nil)...), []byte("half,row")...)
		if err := os.WriteFile(path, damaged, 0o644); err != nil {
			t.Fatal(err)
		}
		w, err := Reopen(dir, run)
		if err != nil {
			t.Fatal(err)
		}
		w.Close()
		got, _ := os.ReadFile(path)
		if !sameLines(got, orig) {
			t.Fatalf("%s after resume:\n%s\nwant the lines of:\n%s", name, got, orig)
		}
	}
}

// sameLines: the same lines, in any order (a restored row goes to the end).
func sameLines(a, b []byte) bool {
	count := map[string]int{}
	for _, l := range bytes.SplitAfter(a, []byte("\n")) {
		count[string(l)]++
	}
	for _, l := range bytes.SplitAfter(b, []byte("\n")) {
		count[string(l)]--
	}
	for _, n := range count {
		if n != 0 {
			return false
		}
	}
	return true
}

// Two writers never share a results directory: the second is refused
// (exit 2) until the first closes; a stored run is not overwritten.
func TestResultsDirectoryLock(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := goldenRun()
	w, err := Create(dir, r.Columns, r.MetricColumns)
	if err != nil {
		t.Fatal(err)
	}
	var busy *BusyError
	if _, err := Reopen(dir, r); !errors.As(err, &busy) || exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), "pid") {
		t.Fatalf("second writer: %v", err)
	}
	if err := w.WriteRun(r); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if _, err := Create(dir, r.Columns, r.MetricColumns); !errors.As(err, &busy) {
		t.Fatalf("Create over a stored run: %v", err)
	}
	w2, err := Reopen(dir, r)
	if err != nil {
		t.Fatalf("after Close: %v", err)
	}
	w2.Close()
}

package results

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"benchmatrix/record"
	"benchmatrix/section"
)

// RunKey identifies a cell run: the cell's name and the repeat.
func RunKey(name string, repeat int) string { return name + "#" + strconv.Itoa(repeat) }

// Reopen prepares an existing results directory for a resumed run. run.json
// is the record of what finished: rows in cells.csv or intervals.csv that it
// does not list (a cell that was being written when the run died, or a half
// row) are removed; the rows of finished cells are kept byte for byte.
func Reopen(dir string, stored *record.Run) (_ *Writer, err error) {
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			lock.Close()
		}
	}()
	done := map[string]bool{}
	for _, c := range stored.Cells {
		done[RunKey(c.Name, c.Repeat)] = true
	}
	for _, f := range []struct {
		name               string
		cellCol, repeatCol int
		header             []string
	}{
		{CellsFile, 0, -1, CellColumns(stored.Columns)},
		{IntervalsFile, 0, 1, IntervalHeader(stored.MetricColumns)},
	} {
		repeatCol := f.repeatCol
		if repeatCol < 0 {
			repeatCol = indexOf(f.header, "repeat")
		}
		// The rows run.json says each finished cell run has.
		want := map[string][][]string{}
		for i := range stored.Cells {
			c := &stored.Cells[i]
			if f.name == CellsFile {
				want[RunKey(c.Name, c.Repeat)] = [][]string{CellRow(c, stored.Columns)}
			} else {
				want[RunKey(c.Name, c.Repeat)] = IntervalRows(c, len(stored.MetricColumns))
			}
		}
		keyOf := func(rec []string) (string, bool) {
			if len(rec) != len(f.header) {
				return "", false
			}
			n, err := strconv.Atoi(rec[repeatCol])
			key := RunKey(rec[f.cellCol], n)
			return key, err == nil && done[key]
		}
		path := filepath.Join(dir, f.name)
		have := map[string]int{}
		if err := filterRows(path, f.header, func(rec []string) bool {
			key, ok := keyOf(rec)
			if ok {
				have[key]++
			}
			return ok
		}); err != nil {
			return nil, err
		}
		// A finished cell run with rows lost (a file cut short, or edited)
		// is written again from run.json, which has all of it.
		var redo []string
		for key, rows := range want {
			if have[key] != len(rows) {
				redo = append(redo, key)
			}
		}
		if len(redo) == 0 {
			continue
		}
		sort.Strings(redo)
		bad := map[string]bool{}
		for _, k := range redo {
			bad[k] = true
		}
		if err := filterRows(path, f.header, func(rec []string) bool {
			key, _ := keyOf(rec)
			return !bad[key]
		}); err != nil {
			return nil, err
		}
		var rows [][]string
		for _, k := range redo {
			rows = append(rows, want[k]...)
		}
		if err := appendSync(path, csvBytes(rows)); err != nil {
			return nil, err
		}
	}
	return &Writer{Dir: dir, columns: stored.Columns, metrics: stored.MetricColumns, lock: lock}, nil
}

func indexOf(xs []string, x string) int {
	for i, v := range xs {
		if v == x {
			return i
		}
	}
	return -1
}

// filterRows keeps the header and the lines whose record passes keep, each
// line's bytes unchanged; a last line without its newline is a half row
// and goes.
func filterRows(path string, header []string, keep func([]string) bool) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	out.Write(csvBytes([][]string{header}))
	r := bufio.NewReader(bytes.NewReader(b))
	first := true
	for {
		line, err := r.ReadBytes('\n')
		if err == io.EOF {
			break // a half row (no newline) or nothing
		}
		if err != nil {
			return err
		}
		if first {
			first = false
			if !bytes.Equal(line, csvBytes([][]string{header})) {
				return fmt.Errorf("%s: header differs from this version's (%q): not a results file this run can resume", path, bytes.TrimSpace(line))
			}
			continue
		}
		rec, perr := csv.NewReader(bytes.NewReader(line)).Read()
		if perr == nil && keep(rec) {
			out.Write(line)
		}
	}
	return section.WriteFileAtomic(path, out.Bytes())
}

package results

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
)

// RunKey identifies a cell run: the cell's name and the repeat.
func RunKey(name string, repeat int) string { return name + "#" + strconv.Itoa(repeat) }

// Reopen prepares an existing results directory for a resumed run. run.json
// is the record of what finished: rows in cells.csv or intervals.csv that it
// does not list (a cell that was being written when the run died, or a half
// row) are removed; the rows of finished cells are kept byte for byte.
func Reopen(dir string, stored *Run) (*Writer, error) {
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
		if err := filterRows(filepath.Join(dir, f.name), f.header, func(rec []string) bool {
			if len(rec) != len(f.header) {
				return false
			}
			n, err := strconv.Atoi(rec[repeatCol])
			return err == nil && done[RunKey(rec[f.cellCol], n)]
		}); err != nil {
			return nil, err
		}
	}
	return &Writer{Dir: dir, columns: stored.Columns, metrics: stored.MetricColumns}, nil
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
	return writeFileAtomic(path, out.Bytes())
}

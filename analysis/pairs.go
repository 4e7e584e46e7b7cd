package analysis

import (
	"math"
	"sort"

	"benchmatrix/record"
)

// Which cells pair with which: the cell a cell is compared with, and the
// rounds in which both finished.

// BaselineFor returns the name of the summary a cell is compared with: the
// cell of the baseline scenario with the same axis values, or the baseline
// cell itself when the baseline names a cell. "" when there is none.
func BaselineFor(baseline string, s record.Summary, all []record.Summary) string {
	if baseline == "" {
		return ""
	}
	for _, o := range all {
		if o.Name == baseline {
			return baseline // a cell name
		}
	}
	// Same parameters apart from the scenario's own.
	for _, o := range all {
		if o.Scenario != baseline {
			continue
		}
		if sameAxes(s, o) {
			return o.Name
		}
	}
	return ""
}

func sameAxes(a, b record.Summary) bool {
	// Cell names are scenario/axis=value/...; compare what follows the scenario.
	return TrimScenario(a.Name, a.Scenario) == TrimScenario(b.Name, b.Scenario)
}

// TrimScenario is a cell's name without its scenario: its axis values
// ("threads=8/sync_binlog=1"), "" for the scenario's only cell.
func TrimScenario(name, scenario string) string {
	if scenario == "" {
		return name
	}
	if name == scenario {
		return ""
	}
	if len(name) > len(scenario) && name[:len(scenario)+1] == scenario+"/" {
		return name[len(scenario)+1:]
	}
	return name
}

// ByRepeat is a run's successful cell runs by name and repeat.
func ByRepeat(r *record.Run) map[string]map[int]*record.Cell {
	out := map[string]map[int]*record.Cell{}
	for i := range r.Cells {
		c := &r.Cells[i]
		if out[c.Name] == nil {
			out[c.Name] = map[int]*record.Cell{}
		}
		if c.Status == record.CellOK && c.Result != nil {
			out[c.Name][c.Repeat] = c
		}
	}
	return out
}

// PairedValues returns column's values of cells x and y in the rounds both
// finished, in repeat order.
func PairedValues(br map[string]map[int]*record.Cell, x, y, column string) (xs, ys []float64) {
	var reps []int
	for rep := range br[x] {
		if _, ok := br[y][rep]; ok {
			reps = append(reps, rep)
		}
	}
	sort.Ints(reps)
	for _, rep := range reps {
		a, b := record.CellValue(br[x][rep], column), record.CellValue(br[y][rep], column)
		if math.IsNaN(a) || math.IsNaN(b) {
			continue
		}
		xs, ys = append(xs, a), append(ys, b)
	}
	return xs, ys
}

package runner

import (
	"fmt"
	"strings"

	"benchmatrix/catalog"
	"benchmatrix/experiment"
	"benchmatrix/record"
	"benchmatrix/server"
)

// changes is what the runner keeps to decide each cell's change with
// experiment.Between, the function plan uses: the cell the running server
// ran last, and the change decided for the cell under way.
type changes struct {
	last    *experiment.Cell   // nil: no cell ran on this server yet
	lastErr string             // why the last cell failed, if it did
	decided *experiment.Change // for the cell under way, once decided
}

// restartNeed is catalog.RestartNeed on the server's flavor, plus the
// variables the server refused to SET as read-only although the catalogue
// did not list them.
func (r *Runner) restartNeed(name string) catalog.Need {
	n := catalog.VariableName(name)
	if r.readOnly[n] {
		return catalog.Restart
	}
	return catalog.RestartNeed(catalog.TargetOf(r.flavor, r.version), n)
}

// planned is the change the runner carries out before c: the plan's
// decision (experiment.Between) from the cell the runner ran last (none in
// a resumed run or a shard), or from none on a server started for c
// (res.Change.Start, set when the server is started). It is decided once
// per cell; what the runner finds later (a read-only variable, a dead
// server, data that is gone) it adds, and did records why.
func (r *Runner) planned(c *experiment.Cell, res *record.Cell) experiment.Change {
	if r.chg.decided != nil {
		return *r.chg.decided
	}
	ch := experiment.Between(r.chg.last, c, r.restartNeed)
	if res.Change.Start && !ch.Start {
		// A server started for c although the cell before ran on the same
		// image and topology (the one before could not start).
		ch = experiment.Between(nil, c, r.restartNeed)
	}
	r.chg.decided = &ch
	return ch
}

// dynamic is the plan's SET GLOBAL list for c (experiment.Between), less
// the variables the server has refused as read-only since: those are set
// at start instead (restartIfNeeded), and overrides says so.
func (r *Runner) dynamic(c *experiment.Cell, res *record.Cell) []server.Setting {
	var out []server.Setting
	for _, p := range r.planned(c, res).Dynamic {
		if !r.readOnly[catalog.VariableName(p.Name)] {
			out = append(out, server.Setting{Name: p.Name, Value: p.Value})
		}
	}
	return out
}

// did completes the cell's Change (what the runner did, in the plan's
// terms) from how its data came to be, says why it differs from the
// plan's, and makes c the cell the server ran last.
func (r *Runner) did(c *experiment.Cell, res *record.Cell) experiment.Change {
	want := r.planned(c, res)
	ch := res.Change
	switch res.Data {
	case "loaded", "restored", "cached": // cached: the data cache's restore
		ch.Reload = true
	}
	ch.Overrides = append(ch.Overrides, r.overrides(c.Change, ch)...) // the limits hook may have added one
	if ch.Start {
		ch.Restart, ch.Cold = nil, false
	}
	ch.Reason = ""
	if ch.Reload {
		ch.Reason = want.Reason
	}
	if ch.Reload && !want.Reload {
		ch.Reason = "the data the plan expected was gone"
	}
	r.chg.last, r.chg.lastErr, r.chg.decided = c, res.Error, nil
	return ch
}

// overrides says where what the runner did (did) departs from the plan's
// change (plan), and why, from what the runner found.
func (r *Runner) overrides(plan, did experiment.Change) []string {
	var out []string
	if did.Start && !plan.Start {
		out = append(out, "start: a new server for this cell (the plan's change was "+plan.Cost()+")")
	}
	{
		var ro, other []string
		planned := map[string]bool{}
		for _, p := range plan.Restart {
			planned[p.Name] = true
		}
		for _, p := range did.Restart {
			switch {
			case planned[p.Name], p.Name == record.MemoryKey: // the limits hook says why
			case r.readOnly[catalog.VariableName(p.Name)]:
				ro = append(ro, p.Name)
			default:
				other = append(other, p.Name+"="+p.Value)
			}
		}
		if len(ro) > 0 {
			out = append(out, fmt.Sprintf("restart: the server refused to SET %s as read-only; set at start instead", strings.Join(ro, ", ")))
		}
		if len(other) > 0 {
			out = append(out, "restart: the server ran other values than the plan expected ("+strings.Join(other, ", ")+")")
		}
	}
	if did.Reload && !plan.Reload && !did.Start {
		why := "the data the plan expected was gone"
		if r.chg.lastErr != "" {
			why += " after the cell before failed (" + firstLine(r.chg.lastErr) + ")"
		}
		out = append(out, "reload: "+why)
	}
	return out
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 120 {
		s = s[:120] + "..."
	}
	return s
}

package runner

import (
	"context"
	"database/sql"
	"fmt"
	"sort"

	"benchmatrix/catalog"
	"benchmatrix/server"
)

// setGlobals remembers, for the server the cells run on, the value each
// variable had before a cell first SET it, so that a later cell that does
// not name the variable runs with the server's own value instead of the
// one the cell before left behind (a scenario "defaults" after a scenario
// "tuned" must run the defaults). A new server starts it afresh; a restart
// leaves it, since putting back a value the restart already put back is a
// no-op.
type setGlobals struct {
	srv  server.Server
	orig map[string]string // variable name -> its value before the first SET
}

// resetsFor notes the value before the first SET of each variable in dyn,
// and returns the SETs that put back every variable a cell before set and
// this cell does not name (names: every variable the cell sets, at start
// or live). The caller applies dyn and the resets together.
func (r *Runner) resetsFor(ctx context.Context, db *sql.DB, dyn []server.Setting, names map[string]bool) ([]server.Setting, error) {
	if r.globals.srv != r.srv || r.globals.orig == nil {
		r.globals = setGlobals{srv: r.srv, orig: map[string]string{}}
	}
	for _, s := range dyn {
		n := catalog.VariableName(s.Name)
		if _, ok := r.globals.orig[n]; ok {
			continue
		}
		v, err := server.ReadGlobal(ctx, db, n)
		if err != nil {
			return nil, fmt.Errorf("read %s before setting it: %w", n, err)
		}
		r.globals.orig[n] = v
	}
	var resets []server.Setting
	for n, v := range r.globals.orig {
		if names[n] {
			continue
		}
		now, err := server.ReadGlobal(ctx, db, n)
		if err != nil {
			return nil, fmt.Errorf("read %s to put it back: %w", n, err)
		}
		if server.SameValue(n, v, now) { // a restart put it back
			delete(r.globals.orig, n)
			continue
		}
		resets = append(resets, server.Setting{Name: n, Value: v})
	}
	sort.Slice(resets, func(i, j int) bool { return resets[i].Name < resets[j].Name })
	return resets, nil
}

// resetDone forgets the variables put back: the server holds its own
// values for them again.
func (r *Runner) resetDone(resets []server.Setting) {
	for _, s := range resets {
		delete(r.globals.orig, s.Name)
	}
}

package observe

import (
	"context"
	"database/sql"
	"sort"

	"benchmatrix/record/parts"
)

// WaitEvent is one performance_schema wait event's share of a cell
// (parts.WaitEvent).
type WaitEvent = parts.WaitEvent

// WaitSnapshot is the global wait summary at one moment; nil when
// performance_schema is off (its tables are then empty).
type WaitSnapshot map[string]WaitEvent

// Waits reads performance_schema.events_waits_summary_global_by_event_name
// (timers in picoseconds). Both MySQL and MariaDB have the table; with
// performance_schema off it returns nil.
func Waits(ctx context.Context, db *sql.DB) (WaitSnapshot, error) {
	var on sql.NullString
	if err := db.QueryRowContext(ctx, "SELECT @@GLOBAL.performance_schema").Scan(&on); err != nil {
		return nil, err
	}
	if on.String != "1" && on.String != "ON" {
		return nil, nil
	}
	rows, err := db.QueryContext(ctx, `SELECT EVENT_NAME, COUNT_STAR, SUM_TIMER_WAIT, MAX_TIMER_WAIT
		FROM performance_schema.events_waits_summary_global_by_event_name
		WHERE COUNT_STAR > 0 AND EVENT_NAME <> 'idle'`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	snap := WaitSnapshot{}
	for rows.Next() {
		var name string
		var n int64
		var ps, maxPS float64
		if err := rows.Scan(&name, &n, &ps, &maxPS); err != nil {
			return nil, err
		}
		snap[name] = WaitEvent{Event: name, Count: n, Seconds: ps / 1e12, MaxSeconds: maxPS / 1e12}
	}
	return snap, rows.Err()
}

// TopWaits returns the n wait events that took the most time between two
// snapshots, most first.
func TopWaits(before, after WaitSnapshot, n int) []WaitEvent {
	if after == nil {
		return nil
	}
	var out []WaitEvent
	for name, a := range after {
		b := before[name]
		d := WaitEvent{Event: name, Count: a.Count - b.Count, Seconds: a.Seconds - b.Seconds,
			MaxSeconds: a.MaxSeconds, MaxInCell: a.MaxSeconds > b.MaxSeconds}
		if d.Count > 0 && d.Seconds > 0 {
			out = append(out, d)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Seconds != out[j].Seconds {
			return out[i].Seconds > out[j].Seconds
		}
		return out[i].Event < out[j].Event
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}

package results

import (
	"fmt"
	"io"
	"strings"

	"benchmatrix/record"
)

// Accounting splits the run's wall time (Started to Finished) by what the
// cells recorded; startSeconds is the server start before the first cell.
func Accounting(r *record.Run, startSeconds float64) record.TimeSplit {
	t := record.TimeSplit{WallSeconds: r.Finished.Sub(r.Started).Seconds(), ServerSeconds: startSeconds}
	for _, c := range r.Cells {
		t.ServerSeconds += c.ServerSeconds
		t.DataSeconds += c.PrepareSeconds
		t.DrainSeconds += c.DrainSeconds
		t.PrewarmSeconds += c.PrewarmSeconds
		t.WarmupSeconds += c.WarmupSeconds
		if c.Result != nil {
			t.MeasuredSeconds += c.Result.Elapsed.Seconds()
		}
		if c.Capacity != nil {
			t.SearchSeconds += c.Capacity.SearchSeconds
		}
	}
	t.OtherSeconds = max(0, t.WallSeconds-t.ServerSeconds-t.DataSeconds-t.DrainSeconds-t.PrewarmSeconds-t.WarmupSeconds-t.MeasuredSeconds-t.SearchSeconds)
	if t.MeasuredSeconds > 0 {
		t.Overhead = (t.WallSeconds - t.WarmupSeconds - t.MeasuredSeconds) / t.MeasuredSeconds
	}
	return t
}

// writeTimeEnv is summary.md's line on where the run's time went.
func writeTimeEnv(w io.Writer, t *record.TimeSplit) {
	if t == nil || t.WallSeconds <= 0 {
		return
	}
	search := ""
	if t.SearchSeconds > 0 {
		search = fmt.Sprintf(", capacity search %.1f s", t.SearchSeconds)
	}
	fmt.Fprintf(w, "| wall time | %.0f s: measured %.0f s, warm-up %.0f s, server starts %.1f s, data %.1f s, drain %.1f s, prewarm %.1f s%s, other %.1f s; overhead %.1f%% of measured time |\n",
		t.WallSeconds, t.MeasuredSeconds, t.WarmupSeconds, t.ServerSeconds, t.DataSeconds, t.DrainSeconds, t.PrewarmSeconds, search, t.OtherSeconds, 100*t.Overhead)
}

// writeDataEnv is summary.md's line on where the cells' data came from:
// how many cell runs loaded it, restored it from this run's snapshot, from
// the data cache across runs (with the entries) or reused it, with the
// seconds each kind took, and what else the cache did.
func writeDataEnv(w io.Writer, r *record.Run) {
	type kind struct {
		n       int
		seconds float64
		cells   []string
		entries []string
	}
	kinds := map[string]*kind{}
	var notes []string
	for _, c := range r.Cells {
		if c.Data == "" {
			continue
		}
		k := kinds[c.Data]
		if k == nil {
			k = &kind{}
			kinds[c.Data] = k
		}
		k.n++
		k.seconds += c.PrepareSeconds
		k.cells = appendNew(k.cells, c.Name)
		if c.DataCache != "" {
			k.entries = appendNew(k.entries, c.DataCache)
		}
		if c.DataCacheNote != "" {
			notes = appendNew(notes, c.Name+": "+c.DataCacheNote)
		}
	}
	if len(kinds) == 0 {
		return
	}
	var parts []string
	for _, name := range []string{"loaded", "restored", "cached", "reused"} {
		k := kinds[name]
		if k == nil {
			continue
		}
		if name == "reused" {
			parts = append(parts, fmt.Sprintf("reused %d", k.n))
			continue
		}
		p := fmt.Sprintf("%s %d (%.1f s", map[string]string{"loaded": "loaded", "restored": "restored from this run's snapshot",
			"cached": "restored from the data cache"}[name], k.n, k.seconds)
		switch {
		case name == "cached" && len(k.entries) > 0:
			p += "; entry " + strings.Join(k.entries, ", ")
		case name == "loaded" && len(k.entries) > 0:
			p += "; saved as cache entry " + strings.Join(k.entries, ", ")
		}
		if len(k.cells) <= 6 {
			p += "; " + strings.Join(k.cells, ", ")
		}
		parts = append(parts, p+")")
	}
	fmt.Fprintf(w, "| data | %s |\n", strings.Join(parts, "; "))
	for _, n := range notes {
		fmt.Fprintf(w, "| data cache | %s |\n", n)
	}
}

func appendNew(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

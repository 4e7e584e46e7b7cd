package results

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"benchmatrix/exitcode"
	"benchmatrix/record"
	"benchmatrix/section"
)

// MergeOptions says what Merge accepts.
type MergeOptions struct {
	// Partial merges what exists: missing shards and shard runs that did
	// not finish every cell run are allowed, and the merged run says so.
	Partial bool
	// AllowIn names entries the output directory may already hold, which
	// Merge leaves alone (swarm keeps its shards inside the merged run).
	AllowIn []string
}

// MergeError is a set of shard directories that cannot be merged; every
// problem is listed. The CLI exits 2.
type MergeError struct{ Problems []string }

func (e *MergeError) Error() string {
	return "cannot merge: " + strings.Join(e.Problems, "; ")
}

// ExitCode implements exitcode.Coder.
func (e *MergeError) ExitCode() int { return exitcode.Usage }

// shardRun is one input of a merge.
type shardRun struct {
	dir  string
	run  *record.Run
	lock *os.File
}

// Merge makes one results directory out from the shard runs in dirs (run
// --shard K/N of one manifest): run.json with the whole plan and every cell
// run in plan order, each cell keeping the host it ran on; cells.csv and
// intervals.csv with the shards' rows in plan order; summary.md and plots
// drawn again. It refuses shards of another manifest, plan, tool version
// or shard count, shards given twice or overlapping, servers of another
// version, and (unless opt.Partial) missing shards and unfinished ones.
// The shard directories are locked while they are read, and left as they
// were.
func Merge(out string, dirs []string, opt MergeOptions) (_ *record.Run, err error) {
	if len(dirs) == 0 {
		return nil, &MergeError{Problems: []string{"no shard directories given"}}
	}
	var in []shardRun
	defer func() {
		for _, s := range in {
			s.lock.Close()
		}
	}()
	var problems []string
	given := map[string]string{}
	for _, d := range dirs {
		abs, _ := filepath.Abs(d)
		if first, dup := given[abs]; dup {
			problems = append(problems, fmt.Sprintf("%s given twice (as %s and %s)", abs, first, d))
			continue
		}
		given[abs] = d
		r, err := ReadRun(d)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", d, err))
			continue
		}
		if r.Shard == nil || r.Shard.K == 0 {
			what := "not a shard run (made without run --shard K/N)"
			if r.Shard != nil {
				what = "a merged run, not a shard run"
			}
			problems = append(problems, fmt.Sprintf("%s: %s", d, what))
			continue
		}
		lock, err := lockDir(d)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		in = append(in, shardRun{dir: d, run: r, lock: lock})
	}
	if len(problems) > 0 {
		return nil, &MergeError{Problems: problems}
	}
	sort.SliceStable(in, func(i, j int) bool { return in[i].run.Shard.K < in[j].run.Shard.K })
	problems = append(problems, checkShards(in, opt)...)
	if len(problems) > 0 {
		return nil, &MergeError{Problems: problems}
	}
	if err := checkMergeOut(out, opt.AllowIn); err != nil {
		return nil, err
	}
	merged, err := mergeRuns(in)
	if err != nil {
		return nil, err
	}
	created := false
	if _, serr := os.Stat(out); errors.Is(serr, fs.ErrNotExist) {
		created = true
	}
	w, err := Create(out, merged.Columns, merged.MetricColumns)
	if err != nil {
		return nil, err
	}
	defer func() {
		w.Close()
		if err != nil {
			if created {
				os.RemoveAll(out)
			} else {
				clearDir(out, opt.AllowIn)
			}
		}
	}()
	if err := writeMergedCSV(out, in, merged); err != nil {
		return nil, err
	}
	if err := copyExtras(out, in); err != nil {
		return nil, err
	}
	if err := w.WriteRun(merged); err != nil {
		return nil, err
	}
	if err := w.WriteSummary(merged); err != nil {
		return nil, err
	}
	return merged, nil
}

// checkShards lists what makes the shard runs unmergeable, each naming
// what differs and where.
func checkShards(in []shardRun, opt MergeOptions) []string {
	var out []string
	first := in[0]
	f := first.run
	differs := func(what, a, b string, s shardRun) {
		if a != b {
			out = append(out, fmt.Sprintf("%s differs: %s has %s, %s has %s", what, first.dir, a, s.dir, b))
		}
	}
	for _, s := range in[1:] {
		r := s.run
		differs("manifest (sha256)", short12(f.ManifestHash), short12(r.ManifestHash), s)
		differs("plan (sha256; another --duration, --warmup or --repeats?)", short12(f.Shard.PlanSHA256), short12(r.Shard.PlanSHA256), s)
		differs("tool version", f.Tool.Version, r.Tool.Version, s)
		differs("tool commit", orNone(f.Tool.Commit), orNone(r.Tool.Commit), s)
		differs("shard count", strconv.Itoa(f.Shard.N), strconv.Itoa(r.Shard.N), s)
		differs("server flavor", orNone(string(f.Server.Flavor)), orNone(string(r.Server.Flavor)), s)
		differs("server version", orNone(f.Server.Version), orNone(r.Server.Version), s)
		differs("cells.csv columns", strings.Join(f.Columns, ","), strings.Join(r.Columns, ","), s)
		differs("intervals.csv metric columns", strings.Join(f.MetricColumns, ","), strings.Join(r.MetricColumns, ","), s)
	}
	if len(out) > 0 {
		return out // the rest would only repeat it
	}
	n := f.Shard.N
	byK := map[int][]string{}
	owner := map[string]string{}
	for _, s := range in {
		byK[s.run.Shard.K] = append(byK[s.run.Shard.K], s.dir)
		for _, c := range s.run.Plan {
			key := RunKey(c.Name, c.Repeat)
			if d, dup := owner[key]; dup && d != s.dir {
				out = append(out, fmt.Sprintf("cell run %s (repeat %d) is in two shards: %s and %s", c.Name, c.Repeat, d, s.dir))
				continue
			}
			owner[key] = s.dir
		}
	}
	var missing []string
	for k := 1; k <= n; k++ {
		switch ds := byK[k]; {
		case len(ds) > 1:
			out = append(out, fmt.Sprintf("shard %d/%d given %d times: %s", k, n, len(ds), strings.Join(ds, ", ")))
		case len(ds) == 0:
			missing = append(missing, fmt.Sprintf("%d/%d", k, n))
		}
	}
	if len(missing) > 0 && !opt.Partial {
		out = append(out, fmt.Sprintf("shard%s %s missing (--partial merges what exists)", plural(len(missing)), strings.Join(missing, ", ")))
	}
	if !opt.Partial {
		for _, s := range in {
			if len(s.run.Cells) < len(s.run.Plan) {
				out = append(out, fmt.Sprintf("shard %d/%d in %s has %d of its %d cell runs (%s): finish it with run MANIFEST --shard %d/%d -o %s --resume, or merge --partial",
					s.run.Shard.K, n, s.dir, len(s.run.Cells), len(s.run.Plan), s.run.Status, s.run.Shard.K, n, s.dir))
			}
		}
	}
	return out
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func short12(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return orNone(h)
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return strconv.Quote(s)
}

// checkMergeOut refuses an output directory that holds anything.
func checkMergeOut(out string, allow []string) error {
	entries, err := os.ReadDir(out)
	entries = slices.DeleteFunc(entries, func(e os.DirEntry) bool { return slices.Contains(allow, e.Name()) || e.Name() == LockFile })
	if err != nil || len(entries) == 0 {
		return nil
	}
	if _, err := os.Stat(filepath.Join(out, RunFile)); err == nil {
		return &MergeError{Problems: []string{out + " already holds a run; give a new or empty directory with -o"}}
	}
	return &MergeError{Problems: []string{out + " is not empty; give a new or empty directory with -o"}}
}

// clearDir empties a directory Merge wrote into but did not create.
func clearDir(dir string, keep []string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if slices.Contains(keep, e.Name()) {
			continue
		}
		os.RemoveAll(filepath.Join(dir, e.Name()))
	}
}

// mergeRuns builds the merged run record.
func mergeRuns(in []shardRun) (*record.Run, error) {
	f := in[0].run
	m := *f
	m.Plan, m.Cells, m.Notes = nil, nil, nil
	m.Time, m.Fingerprint, m.Rounds = nil, nil, nil // rounds.go decides over the merged rounds
	rec := &record.ShardRecord{N: f.Shard.N, PlanSHA256: f.Shard.PlanSHA256, PlanRuns: f.Shard.PlanRuns}
	var hosts []record.Host
	startSeconds := 0.0
	status := record.StatusFinished
	for _, s := range in {
		r := s.run
		k := r.Shard.K
		if r.Started.Before(m.Started) {
			m.Started = r.Started
		}
		if r.Finished.After(m.Finished) {
			m.Finished = r.Finished
		}
		m.Plan = append(m.Plan, r.Plan...)
		for _, c := range r.Cells {
			c.Host, c.Shard = r.Host.Hostname, k
			m.Cells = append(m.Cells, c)
		}
		for _, n := range r.Notes {
			m.Notes = append(m.Notes, fmt.Sprintf("shard %d/%d: %s", k, rec.N, n))
		}
		if r.Status != record.StatusFinished {
			status = record.StatusInterrupted
			if r.Status == record.StatusFailed {
				status = record.StatusFailed
			}
		}
		if r.Time != nil {
			cells := 0.0
			for _, c := range r.Cells {
				cells += c.ServerSeconds
			}
			startSeconds += max(0, r.Time.ServerSeconds-cells)
		}
		hosts = append(hosts, r.Host)
		rec.Merged = append(rec.Merged, record.MergedShard{K: k, Dir: s.dir, Host: r.Host, Status: r.Status, Started: r.Started,
			Finished: r.Finished, CellRuns: len(r.Cells), PlanRuns: len(r.Plan), WholeRounds: r.Shard.WholeRounds, Time: r.Time})
	}
	have := map[int]bool{}
	for _, s := range in {
		have[s.run.Shard.K] = true
	}
	for k := 1; k <= rec.N; k++ {
		if !have[k] {
			rec.Missing = append(rec.Missing, k)
		}
	}
	sort.SliceStable(m.Plan, func(i, j int) bool { return m.Plan[i].Index < m.Plan[j].Index })
	sort.SliceStable(m.Cells, func(i, j int) bool { return m.Cells[i].Index < m.Cells[j].Index })
	rec.Partial = len(m.Cells) < rec.PlanRuns
	if rec.Partial {
		m.Notes = append(m.Notes, fmt.Sprintf("partial merge: %d of the plan's %d cell runs (missing shards: %s)",
			len(m.Cells), rec.PlanRuns, section.IntsOrNone(rec.Missing)))
		if status == record.StatusFinished {
			status = record.StatusInterrupted
		}
	}
	m.Status = status
	m.Host = mergeHosts(hosts)
	m.Shard = rec
	split := Accounting(&m, startSeconds)
	m.Time = &split
	m.Fingerprint = ComputeFingerprint(&m)
	return &m, nil
}

// mergeHosts is the merged run's host: each text field the distinct
// values of the shards' hosts, joined; a number that differs is the first
// shard's (every shard's host is in Shard.Merged).
func mergeHosts(hs []record.Host) record.Host {
	join := func(get func(record.Host) string) string {
		var vals []string
		for _, h := range hs {
			if v := get(h); !slices.Contains(vals, v) {
				vals = append(vals, v)
			}
		}
		return strings.Join(vals, ", ")
	}
	h := hs[0]
	h.Hostname = join(func(h record.Host) string { return h.Hostname })
	h.CPUModel = join(func(h record.Host) string { return h.CPUModel })
	h.Kernel = join(func(h record.Host) string { return h.Kernel })
	h.Storage = join(func(h record.Host) string { return h.Storage })
	h.Filesystem = join(func(h record.Host) string { return h.Filesystem })
	return h
}

// writeMergedCSV writes cells.csv from the run record (as Reopen repairs
// it) and intervals.csv from the shards' own rows, both in plan order. A
// shard's interval rows of a cell run its run.json does not list (one cut
// short by a kill) are left out.
func writeMergedCSV(out string, in []shardRun, m *record.Run) error {
	rows := make([][]string, 0, len(m.Cells))
	for i := range m.Cells {
		rows = append(rows, CellRow(&m.Cells[i], m.Columns))
	}
	if err := appendSync(filepath.Join(out, CellsFile), csvBytes(rows)); err != nil {
		return err
	}
	header := csvBytes([][]string{IntervalHeader(m.MetricColumns)})
	lines := map[string][]byte{}
	for _, s := range in {
		done := map[string]bool{}
		for _, c := range s.run.Cells {
			done[RunKey(c.Name, c.Repeat)] = true
		}
		path := filepath.Join(s.dir, IntervalsFile)
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		r := bufio.NewReader(bytes.NewReader(b))
		first := true
		for {
			line, err := r.ReadBytes('\n')
			if err == io.EOF {
				break // a half row or nothing
			}
			if err != nil {
				return err
			}
			if first {
				first = false
				if !bytes.Equal(line, header) {
					return fmt.Errorf("%s: header differs from the other shards' (%q)", path, bytes.TrimSpace(line))
				}
				continue
			}
			rec, perr := csv.NewReader(bytes.NewReader(line)).Read()
			if perr != nil || len(rec) < 2 {
				continue
			}
			n, _ := strconv.Atoi(rec[1])
			if key := RunKey(rec[0], n); done[key] {
				lines[key] = append(lines[key], line...)
			}
		}
	}
	var body bytes.Buffer
	for _, c := range m.Cells {
		body.Write(lines[RunKey(c.Name, c.Repeat)])
	}
	return appendSync(filepath.Join(out, IntervalsFile), body.Bytes())
}

// copyExtras copies what else the shards' directories hold (profiles/, say)
// apart from the files Merge writes again; two shards with the same file
// of different content is an error, the same content is copied once.
func copyExtras(out string, in []shardRun) error {
	skip := map[string]bool{RunFile: true, CellsFile: true, IntervalsFile: true, SummaryFile: true, BenchFile: true, ReportFile: true, LockFile: true, "plots": true}
	for _, s := range in {
		err := filepath.WalkDir(s.dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(s.dir, path)
			if rel == "." {
				return nil
			}
			top := strings.Split(rel, string(filepath.Separator))[0]
			if skip[top] || strings.HasPrefix(filepath.Base(rel), ".") {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			dst := filepath.Join(out, rel)
			if d.IsDir() {
				return os.MkdirAll(dst, 0o755)
			}
			if !d.Type().IsRegular() {
				return nil
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if old, err := os.ReadFile(dst); err == nil {
				if !bytes.Equal(old, b) {
					return fmt.Errorf("%s: two shards hold different files of this name", rel)
				}
				return nil
			}
			return section.WriteFileAtomic(dst, b)
		})
		if err != nil {
			return fmt.Errorf("merge %s: %w", s.dir, err)
		}
	}
	return nil
}

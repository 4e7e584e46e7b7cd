package runner

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"benchmatrix/catalog"
	"benchmatrix/experiment"
	"benchmatrix/results"
	"benchmatrix/server"
	"benchmatrix/shard"
)

// Request is what `benchmatrix run` was asked to do.
type Request struct {
	Manifest string // the manifest file; empty with Rerun
	Rerun    string // a stored run's directory to run again
	OutDir   string // empty: runs/<experiment>-<timestamp>
	Resume   bool   // continue the run in OutDir
	Force    bool   // external: prepare next to foreign tables
	Flags    experiment.Flags
	Shard    shard.Spec // run --shard K/N (shard.go); zero: the whole plan
	// Notices hears what Setup cleaned up (what a killed benchmatrix left
	// behind); -q does not silence it. nil discards.
	Notices io.Writer
}

// Resolve is the one resolution both `plan` and `run` use: the manifest for
// its provider, with the flags, the flavor and version asked of the
// provider where it can tell before starting (the sandbox runs its
// binary's --version), so that the plan's restart decisions are the run's
// and a variable the version lacks is refused before anything starts.
func Resolve(ctx context.Context, m *experiment.Manifest, f experiment.Flags) (*experiment.Plan, error) {
	if f.Flavor == "" {
		spec := server.Spec{Provider: m.Server.Provider, Binary: m.Server.Binary, Image: m.Server.Image}
		if f.Provider != "" {
			spec.Provider = catalog.ProviderName(f.Provider)
		}
		t := server.TargetBeforeStart(ctx, spec)
		f.Flavor, f.Version = t.Flavor, t.Version
	}
	return resolveFeatures(m, f) // features.go
}

// Setup turns a run request into the plan and the runner's configuration:
// the manifest or the stored run to rerun, the flags, what a resumed run
// keeps, and a results directory that never overwrites another run.
func Setup(ctx context.Context, req Request) (*experiment.Plan, Config, error) {
	var m *experiment.Manifest
	var err error
	seeds := map[string]int64{}
	switch {
	case req.Rerun != "" && req.Manifest == "":
		prev, err := results.ReadRun(req.Rerun)
		if err != nil {
			return nil, Config{}, &UsageError{Msg: fmt.Sprintf("run --rerun: %v", err)}
		}
		if m, err = experiment.Parse(prev.ManifestPath, prev.Manifest); err != nil {
			return nil, Config{}, err
		}
		cells, err := experiment.PlannedCells(prev.Plan)
		if err != nil {
			return nil, Config{}, &UsageError{Msg: fmt.Sprintf("run --rerun: %v", err)}
		}
		req.Flags.Seed, req.Flags.Rerun = prev.Seed, cells
		for _, c := range prev.Cells {
			seeds[results.RunKey(c.Name, c.Repeat)] = c.RandSeed
		}
	case req.Rerun == "" && req.Manifest != "":
		if m, err = experiment.Load(req.Manifest); err != nil {
			return nil, Config{}, err
		}
	default:
		return nil, Config{}, &UsageError{Msg: "benchmatrix run: want exactly one manifest (or --rerun DIR and none)"}
	}
	cfg := Config{OutDir: req.OutDir, Force: req.Force, Seeds: seeds}
	if req.Resume {
		if req.OutDir == "" {
			return nil, cfg, &UsageError{Msg: "benchmatrix run: --resume needs -o DIR, the results directory to continue"}
		}
		if cfg.Resume, err = results.ReadRun(req.OutDir); err != nil {
			return nil, cfg, &UsageError{Msg: fmt.Sprintf("benchmatrix run: cannot resume: %v", err)}
		}
		if req.Flags.Seed == 0 {
			req.Flags.Seed = cfg.Resume.Seed // the same shuffled order
		}
	}
	plan, err := Resolve(ctx, m, req.Flags)
	if err != nil {
		return nil, cfg, err
	}
	if plan, cfg.Shard, err = selectShard(plan, req.Shard, cfg.Resume, req.OutDir); err != nil { // shard.go
		return nil, cfg, err
	}
	if cfg.OutDir == "" {
		cfg.OutDir = filepath.Join("runs", plan.Manifest.Name+"-"+time.Now().Format("20060102-150405"))
	}
	if err := checkOutDir(cfg.OutDir, req.Resume); err != nil {
		return nil, cfg, err
	}
	sweep := server.Spec{Provider: plan.Manifest.Server.Provider, TempDir: plan.Manifest.Server.TempDir, Binary: plan.Manifest.Server.Binary}
	if err := server.Check(sweep); err != nil {
		return nil, cfg, err
	}
	server.Sweep(ctx, sweep, func(what string) {
		if req.Notices != nil {
			fmt.Fprintf(req.Notices, "removed %s, left by a benchmatrix process that no longer runs\n", what)
		}
	})
	if err := setupFeatures(plan, sweep.TempDir, req.Notices); err != nil { // features.go
		return nil, cfg, err
	}
	return plan, cfg, nil
}

// checkOutDir refuses a results directory that would lose something: one
// that holds a run (unless resuming it), or an existing folder with other
// files in it (its summary.md or cells.csv would be overwritten).
func checkOutDir(dir string, resume bool) error {
	_, err := os.Stat(filepath.Join(dir, results.RunFile))
	switch {
	case err == nil && !resume:
		return &UsageError{Msg: fmt.Sprintf("benchmatrix run: %s already holds a run; continue it with --resume, or give another -o", dir)}
	case err == nil:
		return nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil // not there yet (made when the run starts), or the writer will say
	}
	if len(entries) > 0 {
		names := []string{}
		for i, e := range entries {
			if i == 3 {
				names = append(names, "...")
				break
			}
			names = append(names, e.Name())
		}
		return &UsageError{Msg: fmt.Sprintf("benchmatrix run: %s is not a results directory and not empty (%s); give a new or empty directory with -o",
			dir, strings.Join(names, ", "))}
	}
	return nil
}

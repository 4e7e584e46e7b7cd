package runner

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"benchmatrix/catalog"
	"benchmatrix/experiment"
	"benchmatrix/results"
	"benchmatrix/server"
)

// Request is what `benchmatrix run` was asked to do.
type Request struct {
	Manifest string // the manifest file; empty with Rerun
	Rerun    string // a stored run's directory to run again
	OutDir   string // empty: runs/<experiment>-<timestamp>
	Resume   bool   // continue the run in OutDir
	Force    bool   // external: prepare next to foreign tables
	Flags    experiment.Flags
	// Notices hears what Setup cleaned up (what a killed benchmatrix left
	// behind); -q does not silence it. nil discards.
	Notices io.Writer
}

// Resolve is the one resolution both `plan` and `run` use: the manifest for
// its provider, with the flags, the flavor asked of the provider where it
// can tell before starting (the sandbox runs its binary's --version), so
// that the plan's restart decisions are the run's.
func Resolve(ctx context.Context, m *experiment.Manifest, f experiment.Flags) (*experiment.Plan, error) {
	if f.Flavor == "" {
		spec := server.Spec{Provider: m.Server.Provider, Binary: m.Server.Binary, Image: m.Server.Image}
		if f.Provider != "" {
			spec.Provider = catalog.ProviderName(f.Provider)
		}
		f.Flavor = server.FlavorBeforeStart(ctx, spec)
	}
	return experiment.Resolve(m, f)
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
		req.Flags.Seed, req.Flags.Rerun = prev.Seed, prev.Plan
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
	if cfg.OutDir == "" {
		cfg.OutDir = filepath.Join("runs", plan.Manifest.Name+"-"+time.Now().Format("20060102-150405"))
	}
	if _, err := os.Stat(filepath.Join(cfg.OutDir, results.RunFile)); err == nil && !req.Resume {
		return nil, cfg, &UsageError{Msg: fmt.Sprintf("benchmatrix run: %s already holds a run; continue it with --resume, or give another -o", cfg.OutDir)}
	}
	sweep := server.Spec{Provider: plan.Manifest.Server.Provider, TempDir: plan.Manifest.Server.TempDir}
	server.Sweep(ctx, sweep, func(what string) {
		if req.Notices != nil {
			fmt.Fprintf(req.Notices, "removed %s, left by a benchmatrix process that no longer runs\n", what)
		}
	})
	return plan, cfg, nil
}

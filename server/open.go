package server

import (
	"context"
	"fmt"
	"os"

	"benchmatrix/cache"
	"benchmatrix/catalog"
	"benchmatrix/exitcode"
)

// Spec is what the runner asks of a provider: the manifest's [server]
// section as resolved, and the startup options of the server to start.
type Spec struct {
	Provider catalog.ProviderName
	Binary   string // sandbox
	TempDir  string // sandbox, docker: where private directories are made
	Image    string // docker
	DSN      string // external; never stored or printed
	Startup  []Setting
	// Limits are the first cell's resource limits (sandbox: the server
	// starts in its cgroup; docker: the container's HostConfig).
	Limits catalog.LimitSet
	// InitCache (sandbox) keeps initialised datadirs across runs
	// (golden_cache.go); nil: none.
	InitCache *cache.Cache
}

// implementation is the code behind one catalog descriptor.
type implementation struct {
	// open starts (or connects to) a server.
	open func(ctx context.Context, s Spec) (Server, error)
	// sweep removes what an earlier benchmatrix process killed with
	// SIGKILL left behind, naming each thing removed.
	sweep func(ctx context.Context, s Spec, report func(what string))
	// check, if set, finds what would make the start fail, before
	// anything is started (a missing binary, an unusable TMPDIR).
	check func(s Spec) error
	// target, if set, tells the server's flavor and version before
	// starting one.
	target func(ctx context.Context, s Spec) catalog.Target
	// zero is a nil value of the provider's type, for the conformance test.
	zero Server
}

// implementations maps each descriptor in package catalog to its code;
// the conformance test checks that both tables name the same providers.
var implementations = map[catalog.ProviderName]implementation{
	catalog.Sandbox: {
		open: func(ctx context.Context, s Spec) (Server, error) {
			return StartSandbox(ctx, SandboxConfig{Binary: s.Binary, TempDir: s.TempDir, Startup: s.Startup, Limits: s.Limits,
				InitCache: s.InitCache}) // golden_cache.go
		},
		sweep: func(_ context.Context, s Spec, report func(string)) {
			RemoveStale(s.TempDir, report)
			RemoveStaleCgroups(report)
		},
		target: sandboxTarget,
		check: func(s Spec) error {
			if _, err := FindBinary(s.Binary); err != nil {
				return err
			}
			return checkTempDir(s.TempDir)
		},
		zero: (*Sandbox)(nil),
	},
	catalog.Docker: {
		open: func(ctx context.Context, s Spec) (Server, error) {
			return StartDocker(ctx, DockerConfig{Image: s.Image, Startup: s.Startup, Limits: s.Limits})
		},
		sweep: func(ctx context.Context, _ Spec, report func(string)) {
			removed, _ := RemoveStaleContainers(ctx)
			for _, c := range removed {
				report("container " + c)
			}
			nets, _ := RemoveStaleNetworks(ctx) // docker_node.go
			for _, n := range nets {
				report("network " + n)
			}
			for _, p := range RemoveStaleReaperSleeps() { // reaper.go
				report(p)
			}
		},
		zero: (*Docker)(nil),
	},
	catalog.External: {
		open: func(ctx context.Context, s Spec) (Server, error) {
			return ConnectExternal(ctx, ExternalConfig{DSN: s.DSN})
		},
		sweep: func(context.Context, Spec, func(string)) {},
		zero:  (*External)(nil),
	},
}

// Open starts (or connects to) the server the spec's provider gives.
func Open(ctx context.Context, s Spec) (Server, error) {
	impl, ok := implementations[s.Provider]
	if !ok {
		_, err := catalog.Lookup(string(s.Provider))
		return nil, err
	}
	return impl.open(ctx, s)
}

// Sweep removes what benchmatrix processes that no longer run left behind
// for this provider (sandbox directories, containers), naming each.
func Sweep(ctx context.Context, s Spec, report func(what string)) {
	if impl, ok := implementations[s.Provider]; ok {
		impl.sweep(ctx, s, report)
	}
}

// TargetBeforeStart is the flavor and version a provider's server will
// be, when the provider can tell without starting one (the sandbox asks
// its binary's --version, once per binary); zero when it cannot (a Docker
// image, an external server), or on any error: the plan then marks the
// restarts that depend on it, and the start says what is wrong.
func TargetBeforeStart(ctx context.Context, s Spec) catalog.Target {
	if impl, ok := implementations[s.Provider]; ok && impl.target != nil {
		return impl.target(ctx, s)
	}
	return catalog.Target{}
}

func sandboxTarget(ctx context.Context, s Spec) catalog.Target {
	path, err := FindBinary(s.Binary)
	if err != nil {
		return catalog.Target{}
	}
	b, err := DetectBinary(ctx, path)
	if err != nil {
		return catalog.Target{}
	}
	return catalog.TargetOf(b.Flavor, b.Version)
}

// Check finds, before anything starts, what would make the provider fail to
// start its server: a missing server binary, a TMPDIR that is missing or not
// writable. Its errors are exit code 2.
func Check(s Spec) error {
	if impl, ok := implementations[s.Provider]; ok && impl.check != nil {
		return impl.check(s)
	}
	return nil
}

// checkTempDir makes sure private directories can be made under dir.
func checkTempDir(dir string) error {
	if dir == "" {
		dir = os.TempDir()
	}
	f, err := os.CreateTemp(dir, ".benchmatrix-check-*")
	if err != nil {
		return exitcode.UsageError(fmt.Errorf("temporary directory %s is not usable for the server's private directory (%w); "+
			"set TMPDIR or [server] tmpdir to a writable directory on real storage", dir, err))
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

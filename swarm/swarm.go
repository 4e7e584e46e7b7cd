// Package swarm runs the shards of a plan as Docker Swarm replicated jobs
// (issue 19): one single-task replicated-job service per shard, of a locally
// built image with the benchmatrix binary bind-mounted into it, each task
// running `benchmatrix run MANIFEST --shard K/N` with the sandbox provider
// into a shard directory under the results directory, which is bind-mounted
// too; then the shard directories are merged.
//
// It drives the docker CLI. The Docker client benchmatrix already links
// (dockertest's go-dockerclient fork, server/docker.go) has no Swarm API,
// and the Moby client that has one would bring its own dependency tree
// (OpenTelemetry and more) for a handful of calls; a Swarm user has the CLI,
// and its error messages are the ones they know.
//
// Why one service per shard: a replicated job's {{.Task.Slot}} is not a
// clean shard number (on Docker 20.10 it was 1, 2 and then the node ID for
// 3 replicas), so the shard is in each service's command instead.
//
// Why the task always exits 0: Swarm retries a failing job task without end
// even with --restart-condition none. The task (`benchmatrix swarm-task`)
// writes the run's exit code and log into the shared directory and exits 0;
// a task that cannot start at all (a bad mount) shows as Failed or Rejected
// and the service is removed at once.
//
// Nothing outlives the command: the services, their task containers, and a
// swarm it created (left with `docker swarm leave --force`, and the
// docker_gwbridge network that leaving keeps) are removed on every exit
// path; after a SIGKILL the next `benchmatrix swarm` removes what the dead
// process left (Sweep).
package swarm

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"benchmatrix/exitcode"
	"benchmatrix/record"
	"benchmatrix/results"
	"benchmatrix/stale"
)

// Labels on everything benchmatrix creates in Docker for a swarm run.
const (
	LabelRun       = "benchmatrix.swarm"           // the run's id, on services and task containers
	LabelOwnerPID  = "benchmatrix.owner-pid"       // the benchmatrix process
	LabelOwnerHost = "benchmatrix.owner-host"      // its host
	LabelNodeOwner = "benchmatrix.swarm-owner-pid" // on the node: the process that created the swarm
	// LabelNodeGWBefore, on the node: "yes" when docker_gwbridge was there
	// before benchmatrix made the swarm (the sweep after a SIGKILL then
	// keeps it).
	LabelNodeGWBefore = "benchmatrix.swarm-gwbridge-before"
	gwBridge          = "docker_gwbridge"
)

// Config is one swarm run.
type Config struct {
	Manifest string // the manifest file on this host
	Dir      string // the results directory: merged here, shards in Dir/shards/K
	Shards   int
	Image    string // a local image with mariadbd (make docker-image)
	Binary   string // the benchmatrix binary to bind-mount (os.Executable)
	// RunArgs are run flags passed to every shard (--duration 10s ...).
	RunArgs []string
	// Timeout bounds the whole run; the services are removed when it ends.
	Timeout time.Duration
	Log     io.Writer
	Docker  string // the docker CLI, default "docker"
	// Poll is how often task states are read; 0 means 2 s.
	Poll time.Duration
}

// Paths inside a task.
const (
	taskResults = "/results"
	taskBinary  = "/usr/local/bin/benchmatrix"
	// StateDir holds each task's log and exit code in the results
	// directory; ShardsDir the shard runs.
	StateDir  = ".swarm"
	ShardsDir = "shards"
)

// Error is a swarm run that could not be started as asked (exit 2).
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

// ExitCode implements exitcode.Coder.
func (e *Error) ExitCode() int { return exitcode.Usage }

type cli struct {
	docker string
	log    io.Writer
}

// run runs a docker command and returns its trimmed stdout; the error
// carries stderr.
func (c cli) run(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, c.docker, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("docker %s: %v: %s", args[0], err, strings.TrimSpace(errb.String()))
	}
	return strings.TrimSpace(out.String()), nil
}

func (c cli) lines(ctx context.Context, args ...string) ([]string, error) {
	out, err := c.run(ctx, args...)
	if err != nil || out == "" {
		return nil, err
	}
	return strings.Split(out, "\n"), nil
}

// Run runs the shards as swarm services, waits for them, and merges their
// directories into cfg.Dir.
func Run(ctx context.Context, cfg Config) (_ *record.Run, err error) {
	if cfg.Docker == "" {
		cfg.Docker = "docker"
	}
	if cfg.Poll == 0 {
		cfg.Poll = 2 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	d := cli{docker: cfg.Docker, log: cfg.Log}
	if err := checkDir(cfg.Dir); err != nil {
		return nil, err
	}
	if _, err := d.run(ctx, "image", "inspect", "--format", "{{.Id}}", cfg.Image); err != nil {
		return nil, &Error{Msg: fmt.Sprintf("image %s is not on this Docker engine (benchmatrix never pulls; build it with make docker-image): %v", cfg.Image, err)}
	}
	Sweep(ctx, cfg.Docker, func(what string) {
		fmt.Fprintf(cfg.Log, "removed %s, left by a benchmatrix process that no longer runs\n", what)
	})

	s := &session{cli: d, cfg: cfg, pid: os.Getpid()}
	s.host, _ = os.Hostname()
	var id [4]byte
	_, _ = rand.Read(id[:])
	s.id = fmt.Sprintf("%d-%s", s.pid, hex.EncodeToString(id[:]))
	// Cleanup runs whatever happens, on a context of its own: an
	// interrupt must not stop it.
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Minute)
		defer cancel()
		if cerr := s.cleanup(cctx); cerr != nil {
			err = errors.Join(err, fmt.Errorf("swarm cleanup: %w", cerr))
		}
	}()
	if err := s.join(ctx); err != nil {
		return nil, err
	}
	if err := s.prepareDir(); err != nil {
		return nil, err
	}
	rctx := ctx
	if cfg.Timeout > 0 {
		var cancel context.CancelFunc
		rctx, cancel = context.WithTimeout(ctx, cfg.Timeout)
		defer cancel()
	}
	began := time.Now()
	for k := 1; k <= cfg.Shards; k++ {
		if err := s.createService(rctx, k); err != nil {
			return nil, err
		}
	}
	if err := s.wait(rctx); err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			err = fmt.Errorf("the shards did not finish within --timeout %s: services removed, shard directories kept in %s (run again to resume them)", cfg.Timeout, filepath.Join(cfg.Dir, ShardsDir))
		}
		return nil, err
	}
	fmt.Fprintf(cfg.Log, "all %d shards ended after %s\n", cfg.Shards, time.Since(began).Round(time.Second))
	var dirs []string
	var failed []string
	for k := 1; k <= cfg.Shards; k++ {
		dirs = append(dirs, s.shardDir(k))
		code, log := s.status(k)
		if code != exitcode.OK {
			failed = append(failed, fmt.Sprintf("shard %d/%d exited %d:\n%s", k, cfg.Shards, code, tail(log, 15)))
		}
	}
	for _, f := range failed {
		fmt.Fprintln(cfg.Log, f)
	}
	mergeBegan := time.Now()
	run, err := results.Merge(cfg.Dir, dirs, results.MergeOptions{AllowIn: []string{StateDir, ShardsDir}})
	if err != nil {
		return nil, fmt.Errorf("%w (shard directories kept in %s)", err, filepath.Join(cfg.Dir, ShardsDir))
	}
	fmt.Fprintf(cfg.Log, "merged in %s\n", time.Since(mergeBegan).Round(time.Millisecond))
	if len(failed) > 0 {
		return run, fmt.Errorf("%d of %d shards did not exit 0 (logs in %s)", len(failed), cfg.Shards, filepath.Join(cfg.Dir, StateDir))
	}
	return run, nil
}

// checkDir refuses a results directory that holds a merged run or other
// files; one with only shards (an interrupted swarm run) is resumed.
func checkDir(dir string) error {
	if !filepath.IsAbs(dir) {
		return &Error{Msg: "swarm: the results directory must be an absolute path (it is bind-mounted)"}
	}
	if _, err := os.Stat(filepath.Join(dir, results.RunFile)); err == nil {
		return &Error{Msg: fmt.Sprintf("swarm: %s already holds a run; give another -o", dir)}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if n := e.Name(); n != StateDir && n != ShardsDir && n != results.LockFile {
			return &Error{Msg: fmt.Sprintf("swarm: %s is not empty (%s); give a new or empty directory with -o", dir, n)}
		}
	}
	return nil
}

// session is one swarm run's state in Docker.
type session struct {
	cli
	cfg      Config
	id       string
	pid      int
	host     string
	node     string   // this node's ID
	made     bool     // this process initialised the swarm (labelling it may have failed)
	networks []string // network names before the swarm was initialised
	services []string
}

// join makes sure this engine is a swarm manager: an active swarm is used
// as it is; an inactive engine is made a single-node swarm listening on
// loopback only, and the node is labelled with this process as its owner.
func (s *session) join(ctx context.Context) error {
	state, err := s.run(ctx, "info", "--format", "{{.Swarm.LocalNodeState}} {{.Swarm.ControlAvailable}} {{.Swarm.NodeID}}")
	if err != nil {
		return &Error{Msg: fmt.Sprintf("swarm: no Docker engine reachable: %v", err)}
	}
	f := strings.Fields(state)
	switch {
	case len(f) >= 3 && f[0] == "active" && f[1] == "true":
		s.node = f[2]
		fmt.Fprintf(s.log, "using the active swarm (node %s)\n", short(s.node))
		return nil
	case len(f) >= 1 && f[0] == "active":
		return &Error{Msg: "swarm: this engine is a swarm worker; run benchmatrix swarm on a manager"}
	case len(f) >= 1 && f[0] != "inactive":
		return &Error{Msg: fmt.Sprintf("swarm: this engine's swarm state is %q; benchmatrix uses an active swarm or makes one on an inactive engine", f[0])}
	}
	s.networks, _ = s.lines(ctx, "network", "ls", "--format", "{{.Name}}")
	if _, err := s.run(ctx, "swarm", "init", "--advertise-addr", "127.0.0.1", "--listen-addr", "127.0.0.1:2377"); err != nil {
		return fmt.Errorf("swarm init: %w", err)
	}
	s.made = true
	// Swarm sets up the node's ingress sandbox after init returns; a leave
	// before it is there leaves a stale ingress network behind (Docker
	// 20.10), so wait for it.
	waitIngress(ctx, s.cli)
	if s.node, err = s.run(ctx, "info", "--format", "{{.Swarm.NodeID}}"); err != nil {
		// Without the node's ID the cleanup cannot read the label: leave now.
		_, _ = s.run(context.WithoutCancel(ctx), "swarm", "leave", "--force")
		return err
	}
	gw := map[bool]string{true: "yes", false: "no"}[slices.Contains(s.networks, gwBridge)]
	if _, err := s.run(ctx, "node", "update", "--label-add", fmt.Sprintf("%s=%d@%s", LabelNodeOwner, s.pid, s.host),
		"--label-add", LabelNodeGWBefore+"="+gw, s.node); err != nil {
		return err
	}
	fmt.Fprintf(s.log, "made this engine a single-node swarm on 127.0.0.1 (left again at the end)\n")
	return nil
}

func (s *session) shardDir(k int) string {
	return filepath.Join(s.cfg.Dir, ShardsDir, strconv.Itoa(k))
}

func (s *session) statusFile(k int) string {
	return filepath.Join(s.cfg.Dir, StateDir, strconv.Itoa(k)+".status")
}

func (s *session) logFile(k int) string {
	return filepath.Join(s.cfg.Dir, StateDir, strconv.Itoa(k)+".log")
}

// prepareDir makes the results directory, copies the manifest into it (the
// tasks read it there) and clears the status of earlier attempts.
func (s *session) prepareDir() error {
	for _, d := range []string{filepath.Join(s.cfg.Dir, StateDir), filepath.Join(s.cfg.Dir, ShardsDir)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	b, err := os.ReadFile(s.cfg.Manifest)
	if err != nil {
		return &Error{Msg: fmt.Sprintf("swarm: %v", err)}
	}
	if err := os.WriteFile(filepath.Join(s.cfg.Dir, StateDir, filepath.Base(s.cfg.Manifest)), b, 0o644); err != nil {
		return err
	}
	for k := 1; k <= s.cfg.Shards; k++ {
		os.Remove(s.statusFile(k))
	}
	return nil
}

// createService starts shard k's replicated job.
func (s *session) createService(ctx context.Context, k int) error {
	n := s.cfg.Shards
	name := fmt.Sprintf("benchmatrix-%s-shard-%d", s.id, k)
	in := func(p string) string { // a path under the results directory, as the task sees it
		rel, _ := filepath.Rel(s.cfg.Dir, p)
		return taskResults + "/" + filepath.ToSlash(rel)
	}
	run := []string{"run", in(filepath.Join(s.cfg.Dir, StateDir, filepath.Base(s.cfg.Manifest))), "--shard", fmt.Sprintf("%d/%d", k, n),
		"-o", in(s.shardDir(k)), "--provider", "sandbox", "-q"}
	if _, err := os.Stat(filepath.Join(s.shardDir(k), results.RunFile)); err == nil {
		run = append(run, "--resume")
		fmt.Fprintf(s.log, "shard %d/%d: resuming %s\n", k, n, s.shardDir(k))
	}
	run = append(run, s.cfg.RunArgs...)
	args := []string{"service", "create", "--detach", "--quiet", "--name", name,
		"--mode", "replicated-job", "--replicas", "1", "--max-concurrent", "1",
		"--restart-condition", "none", "--restart-max-attempts", "0",
		"--no-resolve-image", "--init", "--stop-grace-period", "60s",
		"--constraint", "node.id==" + s.node,
		// The machine's name, not the container's: a merged run names the
		// machine each cell ran on, and sees shards that shared one.
		"--hostname", "{{.Node.Hostname}}",
		"--mount", "type=bind,source=" + s.cfg.Dir + ",target=" + taskResults,
		"--mount", "type=bind,source=" + s.cfg.Binary + ",target=" + taskBinary + ",readonly",
		"--entrypoint", taskBinary,
	}
	for _, l := range s.labels() {
		args = append(args, "--label", l, "--container-label", l)
	}
	args = append(args, s.cfg.Image, "swarm-task", "--status", in(s.statusFile(k)), "--log", in(s.logFile(k)), "--")
	args = append(args, run...)
	out, err := s.run(ctx, args...)
	if out != "" {
		s.services = append(s.services, out)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(s.log, "shard %d/%d: service %s\n", k, n, name)
	return nil
}

func (s *session) labels() []string {
	return []string{LabelRun + "=" + s.id, LabelOwnerPID + "=" + strconv.Itoa(s.pid), LabelOwnerHost + "=" + s.host}
}

// wait polls the services' tasks until every shard wrote its status. A
// task Swarm could not start (Failed, Rejected) ends the wait at once.
func (s *session) wait(ctx context.Context) error {
	t := time.NewTicker(s.cfg.Poll)
	defer t.Stop()
	reported := map[int]bool{}
	for {
		done := 0
		for k := 1; k <= s.cfg.Shards; k++ {
			if _, err := os.Stat(s.statusFile(k)); err == nil {
				done++
				if !reported[k] {
					reported[k] = true
					code, _ := s.status(k)
					fmt.Fprintf(s.log, "shard %d/%d ended (exit %d)\n", k, s.cfg.Shards, code)
				}
			}
		}
		if done == s.cfg.Shards {
			return nil
		}
		for i, svc := range s.services {
			k := i + 1
			tasks, err := s.lines(ctx, "service", "ps", svc, "--no-trunc", "--format", "{{.CurrentState}}|{{.Error}}")
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				return err
			}
			for _, task := range tasks {
				state, msg, _ := strings.Cut(task, "|")
				if strings.HasPrefix(state, "Failed") || strings.HasPrefix(state, "Rejected") {
					return fmt.Errorf("swarm task of %s could not run: %s %s", svc, state, msg)
				}
				if _, err := os.Stat(s.statusFile(k)); err != nil && strings.HasPrefix(state, "Complete") {
					return fmt.Errorf("swarm task of %s completed without writing its status in %s", svc, filepath.Join(s.cfg.Dir, StateDir))
				}
			}
			if len(tasks) > 3 {
				return fmt.Errorf("swarm started %d tasks for %s: stopping it", len(tasks), svc)
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// status reads shard k's exit code and log.
func (s *session) status(k int) (int, string) {
	b, err := os.ReadFile(s.statusFile(k))
	code := exitcode.Failure
	if err == nil {
		if c, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			code = c
		}
	}
	log, _ := os.ReadFile(s.logFile(k))
	return code, string(log)
}

// cleanup removes the services (their tasks get SIGTERM and up to the stop
// grace period to keep what they finished), then the task containers, then
// the swarm if this process made it.
func (s *session) cleanup(ctx context.Context) error {
	var errs []error
	if err := removeRun(ctx, s.cli, LabelRun+"="+s.id); err != nil {
		errs = append(errs, err)
	}
	// The owner label, not ownsSwarm: another benchmatrix that made the
	// swarm may have passed it to this process.
	if s.node != "" {
		owner, _ := s.run(ctx, "node", "inspect", s.node, "--format", `{{index .Spec.Labels "`+LabelNodeOwner+`"}}`)
		if owner == fmt.Sprintf("%d@%s", s.pid, s.host) || (s.made && owner == "") {
			if err := leaveIfOwner(ctx, s.cli, s.node, s.networks); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// removeRun removes the services with the label, waits for their task
// containers to stop, and removes those.
func removeRun(ctx context.Context, d cli, label string) error {
	var errs []error
	svcs, _ := d.lines(ctx, "service", "ls", "-q", "--filter", "label="+label)
	if len(svcs) > 0 {
		if _, err := d.run(ctx, append([]string{"service", "rm"}, svcs...)...); err != nil {
			errs = append(errs, err)
		}
	}
	deadline := time.Now().Add(75 * time.Second) // the stop grace period and some
	for time.Now().Before(deadline) {
		running, err := d.lines(ctx, "ps", "-q", "--filter", "label="+label)
		if err != nil || len(running) == 0 {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
	// Swarm may still create a container for a task it had scheduled:
	// list until none is left.
	for range 5 {
		all, err := d.lines(ctx, "ps", "-aq", "--filter", "label="+label)
		if err != nil {
			errs = append(errs, err)
			break
		}
		if len(all) == 0 {
			break
		}
		if _, err := d.run(ctx, append([]string{"rm", "-f", "-v"}, all...)...); err != nil && !strings.Contains(err.Error(), "No such container") {
			errs = append(errs, err)
		}
		time.Sleep(time.Second)
	}
	return errors.Join(errs...)
}

// leaveIfOwner leaves the swarm this process (or a dead one) made, unless
// services of a live benchmatrix still use it: then the node's owner label
// passes to that process, which leaves it when it is done. Leaving keeps
// the docker_gwbridge network; it goes too when it was not there before.
func leaveIfOwner(ctx context.Context, d cli, node string, before []string) error {
	for _, o := range services(ctx, d) {
		if pid, err := strconv.Atoi(o.pid); err == nil && pid != os.Getpid() && stale.Alive(pid) {
			host, _ := os.Hostname()
			_, err := d.run(ctx, "node", "update", "--label-add", fmt.Sprintf("%s=%d@%s", LabelNodeOwner, pid, host), node)
			return err
		}
	}
	if _, err := d.run(ctx, "swarm", "leave", "--force"); err != nil {
		return err
	}
	if stale, _ := d.lines(ctx, "network", "ls", "-q", "--filter", "name=^ingress$"); len(stale) > 0 {
		// Left half set up (see waitIngress): make and leave a swarm
		// again, this time once the sandbox is there.
		if _, err := d.run(ctx, "swarm", "init", "--advertise-addr", "127.0.0.1", "--listen-addr", "127.0.0.1:2377"); err == nil {
			waitIngress(ctx, d)
			_, _ = d.run(ctx, "swarm", "leave", "--force")
		}
		if stale, _ := d.lines(ctx, "network", "ls", "-q", "--filter", "name=^ingress$"); len(stale) > 0 {
			return fmt.Errorf("after leaving the swarm the engine still lists its ingress network")
		}
	}
	if !slices.Contains(before, gwBridge) {
		// The bridge can take a moment to lose its endpoints.
		var err error
		for range 10 {
			if _, err = d.run(ctx, "network", "rm", gwBridge); err == nil || strings.Contains(err.Error(), "No such network") || strings.Contains(err.Error(), "not found") {
				return nil
			}
			time.Sleep(time.Second)
		}
		return err
	}
	return nil
}

// waitIngress waits (up to 30 s) for the node's ingress sandbox, the
// ingress-sbox endpoint on docker_gwbridge.
func waitIngress(ctx context.Context, d cli) {
	for range 60 {
		eps, _ := d.run(ctx, "network", "inspect", gwBridge, "--format", "{{range $k, $v := .Containers}}{{$k}} {{end}}")
		if strings.Contains(eps, "ingress-sbox") || ctx.Err() != nil {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// Sweep removes what benchmatrix swarm processes on this host left when
// they died (SIGKILL): their services and task containers, and a swarm one
// of them made, left when no live benchmatrix uses it.
func Sweep(ctx context.Context, docker string, report func(what string)) {
	if docker == "" {
		docker = "docker"
	}
	d := cli{docker: docker, log: io.Discard}
	host, _ := os.Hostname()
	state, err := d.run(ctx, "info", "--format", "{{.Swarm.LocalNodeState}} {{.Swarm.ControlAvailable}} {{.Swarm.NodeID}}")
	f := strings.Fields(state)
	if err != nil || len(f) < 3 || f[0] != "active" || f[1] != "true" {
		// No swarm: task containers can still be left from one.
		sweepContainers(ctx, d, host, report)
		return
	}
	for _, o := range services(ctx, d) {
		if o.host != host {
			continue
		}
		if pid, err := strconv.Atoi(o.pid); err == nil && stale.Gone(pid) {
			if removeRun(ctx, d, LabelRun+"="+o.run) == nil {
				report("swarm service " + o.name)
			}
		}
	}
	sweepContainers(ctx, d, host, report)
	owner, _ := d.run(ctx, "node", "inspect", f[2], "--format", `{{index .Spec.Labels "`+LabelNodeOwner+`"}}`)
	pidText, ownerHost, ok := strings.Cut(owner, "@")
	if pid, err := strconv.Atoi(pidText); ok && err == nil && ownerHost == host && stale.Gone(pid) {
		// docker_gwbridge goes too unless the dead process found it there
		// (its label on the node says).
		var before []string
		if gw, _ := d.run(ctx, "node", "inspect", f[2], "--format", `{{index .Spec.Labels "`+LabelNodeGWBefore+`"}}`); gw == "yes" {
			before = []string{gwBridge}
		}
		if leaveIfOwner(ctx, d, f[2], before) == nil {
			report("the single-node swarm it made")
		}
	}
}

// service is a benchmatrix swarm service and its owner.
type service struct{ name, run, pid, host string }

// services lists the swarm services benchmatrix made (service ls cannot
// print labels: inspect can).
func services(ctx context.Context, d cli) []service {
	ids, _ := d.lines(ctx, "service", "ls", "-q", "--filter", "label="+LabelOwnerPID)
	if len(ids) == 0 {
		return nil
	}
	rows, _ := d.lines(ctx, append([]string{"service", "inspect", "--format",
		`{{.Spec.Name}}|{{index .Spec.Labels "` + LabelRun + `"}}|{{index .Spec.Labels "` + LabelOwnerPID + `"}}|{{index .Spec.Labels "` + LabelOwnerHost + `"}}`}, ids...)...)
	var out []service
	for _, row := range rows {
		if p := strings.Split(row, "|"); len(p) == 4 {
			out = append(out, service{p[0], p[1], p[2], p[3]})
		}
	}
	return out
}

// sweepContainers removes task containers of dead benchmatrix processes.
func sweepContainers(ctx context.Context, d cli, host string, report func(string)) {
	rows, _ := d.lines(ctx, "ps", "-a", "--filter", "label="+LabelRun, "--format",
		`{{.ID}}|{{.Label "`+LabelOwnerPID+`"}}|{{.Label "`+LabelOwnerHost+`"}}`)
	for _, row := range rows {
		p := strings.Split(row, "|")
		if len(p) != 3 || p[2] != host {
			continue
		}
		if pid, err := strconv.Atoi(p[1]); err == nil && stale.Gone(pid) {
			if _, err := d.run(ctx, "rm", "-f", "-v", p[0]); err == nil {
				report("swarm task container " + p[0])
			}
		}
	}
}

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "    " + strings.Join(lines, "\n    ")
}

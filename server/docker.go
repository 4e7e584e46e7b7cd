package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/ory/dockertest/v3"
	dc "github.com/ory/dockertest/v3/docker"

	"benchmatrix/catalog"
	"benchmatrix/exitcode"
	"benchmatrix/stale"
)

// DockerConfig says how to run a server in a container.
type DockerConfig struct {
	// Image is "repo:tag"; empty means DefaultDockerImage. It must already
	// be present: benchmatrix never pulls.
	Image string
	// Startup options, passed as server flags in the container's command.
	Startup []Setting
	// Password for root@'%'; empty means a random one. It goes to the
	// container in its environment and is never logged or put in errors.
	Password string `json:"-"`
	// ReadyTimeout bounds the wait for the first successful connection
	// (default 2 minutes).
	ReadyTimeout time.Duration
	// Limits go into the container's HostConfig (limits_docker.go).
	Limits catalog.LimitSet
	// Tmpfs puts the datadir in memory (/dev/shm) instead of on disk
	// (os.TempDir()). fsync is then nearly free, which cancels the
	// sync_binlog and innodb_flush_log_at_trx_commit axes: use it only
	// for experiments that do not measure durability.
	Tmpfs bool
	// Network, when set, is the private network of a topology's nodes
	// (docker_node.go): the container runs on it alone, its port published
	// on a fixed host port.
	Network *DockerNetwork
	// Hostname is the container's host name (a topology's node name): on
	// its private network the other nodes reach it by that name (Docker's
	// embedded DNS), whatever address its container has; it is also the
	// server's @@hostname. Empty: Docker's (the container's short id).
	Hostname string
	// MySQLVersion is the version of the image's MySQL server when known
	// before it runs (InspectDockerImage): the variable names of its first
	// start (mysql.go); afterwards the running server's own.
	MySQLVersion string
	// Env is more environment for the image's entrypoint (never a secret:
	// the password has its own field).
	Env []string
}

// Docker labels: the owner's process id and host let RemoveStaleContainers
// recognise containers whose benchmatrix died.
const (
	dockerLabelOwnerPID  = "benchmatrix.owner-pid"
	dockerLabelOwnerHost = "benchmatrix.owner-host"
	// Labels the build script puts on the image.
	dockerLabelMySQLUID = "benchmatrix.mysql-uid"
	dockerLabelMySQLGID = "benchmatrix.mysql-gid"
)

// DockerDirPrefix begins the name of every host datadir; the rest is the
// owner's process id.
const DockerDirPrefix = "benchmatrix-docker-"

// dockerBaseFlags start every container's server the way the sandbox starts
// its own: cold caches, a server id for the binlog. Startup flags follow, so
// they can override these.
var dockerBaseFlags = []string{
	"--server-id=1",
	"--innodb-buffer-pool-load-at-startup=OFF",
	"--innodb-buffer-pool-dump-at-shutdown=OFF",
}

// Docker is a server in a container the provider owns. The datadir is a
// host directory bind-mounted at /var/lib/mysql, so a restart (a new
// container with new flags) keeps the data. Like a sandbox, it never
// outlives benchmatrix on purpose: Stop removes the container and the
// directory, and KillAll does the same in an emergency.
type Docker struct {
	cfg      DockerConfig
	repo     string
	tag      string
	pool     *dockertest.Pool
	dir      string // host datadir
	password string // never print it
	host     string // where published ports are reached

	mu       sync.Mutex
	res      *dockertest.Resource
	addr     string
	flavor   catalog.Flavor
	version  string
	startup  []Setting
	lastLogs string  // log of the last removed container
	reaper   *reaper // removes the container if benchmatrix dies (reaper.go)
	stopped  bool
	pidOf    string // the container pid belongs to; a restart makes a new one
	pid      int    // host pid of its server, 0 if not visible from here

	lim dockerLimits // resource limits (limits_docker.go)

	hostPort string // fixed published port of a topology node (docker_node.go)
}

var (
	_ Server                    = (*Docker)(nil)
	_ interface{ Alive() bool } = (*Docker)(nil)
	_ interface{ PID() int }    = (*Docker)(nil)
)

var liveDockers liveSet[*Docker]

// DockerUnavailableError says no Docker engine answers.
type DockerUnavailableError struct{ Err error }

func (e *DockerUnavailableError) Error() string {
	return fmt.Sprintf("no Docker engine responds (%v); start one, point DOCKER_HOST at one, or use the sandbox provider", e.Err)
}

func (e *DockerUnavailableError) Unwrap() error { return e.Err }

// ExitCode implements exitcode.Coder: a missing engine is the environment's
// problem, found before running (2).
func (e *DockerUnavailableError) ExitCode() int { return exitcode.Usage }

// ImageMissingError says the image is not present locally.
type ImageMissingError struct{ Image string }

// ExitCode implements exitcode.Coder (2: build or pull the image first).
func (e *ImageMissingError) ExitCode() int { return exitcode.Usage }

func (e *ImageMissingError) Error() string {
	if repo, _ := splitImage(e.Image); repo != "benchmatrix/mariadb" {
		// Someone else's image (mysql:8.4): only the user can bring it.
		return fmt.Sprintf("docker image %s is not present and benchmatrix never pulls; load it first "+
			"(docker pull %s, or docker load -i a saved image)", e.Image, e.Image)
	}
	return fmt.Sprintf("docker image %s is not present and benchmatrix never pulls; build it with `make docker-image` "+
		"(scripts/build-mariadb-image.sh %s)", e.Image, e.Image)
}

// dockerPool connects to the engine (DOCKER_HOST, or the local socket) and
// checks that it answers.
func dockerPool(ctx context.Context) (*dockertest.Pool, error) {
	pool, err := dockertest.NewPool("")
	if err != nil {
		return nil, &DockerUnavailableError{Err: err}
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := pool.Client.PingWithContext(pctx); err != nil {
		return nil, &DockerUnavailableError{Err: err}
	}
	return pool, nil
}

// DockerAvailable returns nil when a Docker engine answers, else a
// *DockerUnavailableError.
func DockerAvailable(ctx context.Context) error {
	_, err := dockerPool(ctx)
	return err
}

// DockerImageExists reports whether image is present in the engine.
func DockerImageExists(ctx context.Context, image string) (bool, error) {
	pool, err := dockerPool(ctx)
	if err != nil {
		return false, err
	}
	_, err = pool.Client.InspectImage(image)
	if errors.Is(err, dc.ErrNoSuchImage) {
		return false, nil
	}
	return err == nil, err
}

func splitImage(image string) (repo, tag string) {
	if i := strings.LastIndex(image, ":"); i > strings.LastIndex(image, "/") {
		return image[:i], image[i+1:]
	}
	return image, "latest"
}

// StartDocker runs the image with the startup options as server flags and
// waits until a real SQL connection succeeds.
func StartDocker(ctx context.Context, cfg DockerConfig) (_ *Docker, err error) {
	if cfg.Image == "" {
		cfg.Image = catalog.DefaultDockerImage
	}
	if cfg.ReadyTimeout <= 0 {
		cfg.ReadyTimeout = 2 * time.Minute
	}
	pool, err := dockerPool(ctx)
	if err != nil {
		return nil, err
	}
	repo, tag := splitImage(cfg.Image)
	img, err := pool.Client.InspectImage(repo + ":" + tag)
	if errors.Is(err, dc.ErrNoSuchImage) {
		return nil, &ImageMissingError{Image: repo + ":" + tag}
	}
	if err != nil {
		return nil, fmt.Errorf("inspect docker image %s: %w", cfg.Image, err)
	}
	_, _ = RemoveStaleContainers(ctx)

	d := &Docker{cfg: cfg, repo: repo, tag: tag, pool: pool, password: cfg.Password, host: "127.0.0.1"}
	if cfg.MySQLVersion != "" {
		d.flavor, d.version = catalog.MySQL, cfg.MySQLVersion
	}
	if d.password == "" {
		b := make([]byte, 18)
		if _, err := rand.Read(b); err != nil {
			return nil, err
		}
		d.password = hex.EncodeToString(b)
	}
	if u, err := url.Parse(os.Getenv("DOCKER_HOST")); err == nil && u.Scheme == "tcp" && u.Hostname() != "" {
		d.host = u.Hostname() // a remote engine publishes ports on its own host
	}
	base := os.TempDir()
	if cfg.Tmpfs {
		base = "/dev/shm"
	}
	d.dir, err = os.MkdirTemp(base, DockerDirPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return nil, fmt.Errorf("docker datadir: %w", err)
	}
	liveDockers.add(d)
	defer func() {
		if err != nil {
			d.kill()
		}
	}()
	if err := d.prepareDir(img); err != nil {
		return nil, err
	}
	d.lim.want = cfg.Limits.Server()
	if err := d.findDevice(d.lim.want); err != nil {
		return nil, err
	}
	if err := d.launch(ctx, cfg.Startup); err != nil {
		return nil, err
	}
	return d, nil
}

// prepareDir hands the datadir to the image's mysql user (the entrypoint
// chowns it too, but a non-root benchmatrix needs the mode).
func (d *Docker) prepareDir(img *dc.Image) error {
	uid, gid := 999, 999 // the official mysql and mariadb images
	if img.Config != nil {
		if v, err := strconv.Atoi(img.Config.Labels[dockerLabelMySQLUID]); err == nil {
			uid = v
		}
		if v, err := strconv.Atoi(img.Config.Labels[dockerLabelMySQLGID]); err == nil {
			gid = v
		}
	}
	if err := os.Chown(d.dir, uid, gid); err != nil {
		// Not root: let the container's user write it.
		if err := os.Chmod(d.dir, 0o777); err != nil {
			return fmt.Errorf("docker datadir %s: %w", d.dir, err)
		}
	}
	return nil
}

var dockerSeq atomic.Int64

// launch creates and starts a container on the datadir and waits for it.
func (d *Docker) launch(ctx context.Context, startup []Setting) error {
	cmd := slices.Clone(dockerBaseFlags)
	flags, err := d.mysqlFlags(startup) // mysql.go: a MySQL version's names
	if err != nil {
		return err
	}
	for _, s := range flags {
		cmd = append(cmd, StartupFlag(s))
	}
	bindIP := "127.0.0.1" // not reachable from other hosts
	if d.host != "127.0.0.1" {
		bindIP = ""
	}
	hostname, _ := os.Hostname()
	opts := &dockertest.RunOptions{
		Name:       fmt.Sprintf("benchmatrix-%d-%d", os.Getpid(), dockerSeq.Add(1)),
		Hostname:   d.cfg.Hostname,
		Repository: d.repo,
		Tag:        d.tag,
		Env: append([]string{
			"MARIADB_ROOT_PASSWORD=" + d.password,
			"MYSQL_ROOT_PASSWORD=" + d.password, // for official mysql images
		}, d.cfg.Env...),
		Cmd:          cmd,
		Mounts:       []string{d.dir + ":/var/lib/mysql"},
		ExposedPorts: []string{"3306/tcp"},
		Labels: map[string]string{
			dockerLabelOwnerPID:  strconv.Itoa(os.Getpid()),
			dockerLabelOwnerHost: hostname,
		},
	}
	res, err := d.pool.RunWithOptions(opts, func(hc *dc.HostConfig) {
		hc.AutoRemove = false // keep the logs until we have read them
		hc.RestartPolicy = dc.RestartPolicy{Name: "no"}
		hc.PortBindings = map[dc.Port][]dc.PortBinding{"3306/tcp": {{HostIP: bindIP}}}
		d.hostLimits(hc)
		d.onNetwork(hc) // docker_node.go
	})
	if err != nil {
		return hidePassword(fmt.Errorf("run docker image %s: %w", d.cfg.Image, err), d.password)
	}
	d.mu.Lock()
	d.res = res
	d.reaper = startReaper(res.Container.ID, d.dir) // reaper.go
	d.mu.Unlock()
	if err := d.waitReady(ctx); err != nil {
		logs := d.containerLogs(30)
		_ = d.removeContainer(10 * time.Second)
		return hidePassword(fmt.Errorf("docker container %s (%s) did not become ready: %w\nlast lines of its log:\n%s",
			opts.Name, d.cfg.Image, err, logs), d.password)
	}
	d.mu.Lock()
	d.startup = slices.Clone(startup)
	d.mu.Unlock()
	return nil
}

// waitReady polls until the port is published and a client connects, and
// then reads the flavor and version.
func (d *Docker) waitReady(ctx context.Context) error {
	// The driver logs every handshake the docker proxy cuts short.
	deadline := time.Now().Add(d.cfg.ReadyTimeout)
	id := d.containerID()
	var lastErr error
	var db *sql.DB
	defer func() {
		if db != nil {
			db.Close()
		}
	}()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		c, err := d.pool.Client.InspectContainerWithContext(id, ctx)
		switch {
		case err != nil:
			lastErr = err
		case !c.State.Running:
			return fmt.Errorf("container exited during start-up (status %d)", c.State.ExitCode)
		case db == nil && c.NetworkSettings != nil:
			// Docker may publish the port a moment after the start.
			if b := c.NetworkSettings.Ports["3306/tcp"]; len(b) > 0 && b[0].HostPort != "" {
				d.mu.Lock()
				d.addr = net.JoinHostPort(d.host, b[0].HostPort)
				d.mu.Unlock()
				ep := d.Endpoint()
				ep.Timeout = time.Second
				conn, err := mysql.NewConnector(ep)
				if err != nil {
					return err
				}
				db = sql.OpenDB(conn)
			} else {
				lastErr = errors.New("port 3306/tcp not published yet")
			}
		}
		if db != nil {
			pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			err := db.PingContext(pctx)
			if err == nil {
				var f catalog.Flavor
				var v string
				f, v, err = detectFlavor(pctx, db)
				if err == nil {
					if verr := checkServerVersion(f, v); verr != nil { // mysql.go
						cancel()
						return verr
					}
					cancel()
					d.mu.Lock()
					d.flavor, d.version = f, v
					d.mu.Unlock()
					return nil
				}
			}
			cancel()
			lastErr = err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no connection after %s: %w", d.cfg.ReadyTimeout, lastErr)
		}
		select {
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
		}
	}
}

func (d *Docker) containerID() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.containerIDLocked()
}

func (d *Docker) containerIDLocked() string {
	if d.res == nil {
		return ""
	}
	return d.res.Container.ID
}

// ContainerID returns the running container's id, or "".
func (d *Docker) ContainerID() string { return d.containerID() }

// Dir returns the host directory holding the datadir.
func (d *Docker) Dir() string { return d.dir }

// dockerProbeTimeout bounds the engine calls behind Alive and PID: the
// runner asks after every failure and before every cell.
const dockerProbeTimeout = 3 * time.Second

// Alive reports whether the server's container still runs: it exists, and
// the engine says it is running, not restarting and not dead. An engine
// that does not answer within dockerProbeTimeout proves nothing, so that
// counts as alive; the runner's next SQL call will tell. After Stop, or a
// Restart that failed before its new container ran, it is false.
func (d *Docker) Alive() bool {
	d.mu.Lock()
	stopped := d.stopped
	d.mu.Unlock()
	id := d.containerID()
	if stopped || id == "" {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), dockerProbeTimeout)
	defer cancel()
	c, err := d.pool.Client.InspectContainerWithContext(id, ctx)
	var gone *dc.NoSuchContainer
	switch {
	case errors.As(err, &gone):
		return false
	case err != nil:
		return true
	}
	st := c.State
	return st.Running && !st.Restarting && !st.Dead && !st.RemovalInProgress
}

// PID implements the runner's server-CPU probe: the host process id of the
// container's server, or 0 when there is none or this process cannot see
// it. The image's entrypoint execs the server, so the container's first
// process (State.Pid, in the engine's PID namespace) is the server. An
// engine in another PID namespace (a remote DOCKER_HOST, Docker Desktop's
// VM, benchmatrix itself in a container) reports a number that means
// nothing here: PID returns 0 rather than sample someone else's CPU. The
// answer is kept until the container changes (a restart makes a new one).
func (d *Docker) PID() int {
	id := d.containerID()
	if id == "" {
		return 0
	}
	d.mu.Lock()
	if d.pidOf == id {
		pid := d.pid
		d.mu.Unlock()
		return pid
	}
	d.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), dockerProbeTimeout)
	defer cancel()
	c, err := d.pool.Client.InspectContainerWithContext(id, ctx)
	if err != nil || !c.State.Running || c.State.Pid <= 0 {
		return 0 // not known yet: ask again next time
	}
	pid := c.State.Pid
	visible, isServer := hostServer(pid)
	switch {
	case !visible:
		pid = 0 // for good: this container's number is not ours
	case !isServer:
		return 0 // the entrypoint has not exec'd the server yet
	}
	d.mu.Lock()
	if d.containerIDLocked() == id {
		d.pidOf, d.pid = id, pid
	}
	d.mu.Unlock()
	return pid
}

// hostServer looks at pid, a container's first process as the engine
// numbers it, from this process's PID namespace. visible: /proc shows the
// first process of a nested PID namespace there, so the engine's number
// means the same here. isServer: that process is a MySQL-family server
// (comm mariadbd or mysqld).
func hostServer(pid int) (visible, isServer bool) {
	dir := filepath.Join("/proc", strconv.Itoa(pid))
	status, err := os.ReadFile(filepath.Join(dir, "status"))
	if err != nil || !containerInit(string(status)) {
		return false, false
	}
	comm, err := os.ReadFile(filepath.Join(dir, "comm"))
	if err != nil {
		return false, false
	}
	name := strings.TrimSpace(string(comm))
	return true, name == "mariadbd" || name == "mysqld"
}

// containerInit reports whether a /proc/PID/status text describes the
// first process of a nested PID namespace: its NSpid line lists more than
// one id (one per namespace, outermost first) and the innermost is 1.
func containerInit(status string) bool {
	for line := range strings.Lines(status) {
		rest, ok := strings.CutPrefix(line, "NSpid:")
		if !ok {
			continue
		}
		ids := strings.Fields(rest)
		return len(ids) > 1 && ids[len(ids)-1] == "1"
	}
	return false
}

// Info implements Server.
func (d *Docker) Info() Info {
	d.mu.Lock()
	defer d.mu.Unlock()
	return Info{Provider: "docker", Flavor: d.flavor, Version: d.version, Binary: d.cfg.Image,
		Address: d.addr, Datadir: d.dir}
}

// Endpoint implements Server. The copy carries the password, as a client
// needs it; do not log it (FormatDSN would show it).
func (d *Docker) Endpoint() *mysql.Config {
	d.mu.Lock()
	defer d.mu.Unlock()
	c := mysql.NewConfig()
	c.User = "root"
	c.Passwd = d.password
	c.Net = "tcp"
	c.Addr = d.addr
	c.Timeout = 10 * time.Second
	return c
}

// Startup implements Server.
func (d *Docker) Startup() []Setting {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.startup)
}

// LogTail implements Server: the running container's log, or the one
// collected from the last container before it was removed.
func (d *Docker) LogTail(n int) string {
	if d.containerID() != "" {
		if s := d.containerLogs(n); s != "" {
			return s
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return lastLines(d.lastLogs, n)
}

func (d *Docker) containerLogs(n int) string {
	id := d.containerID()
	if id == "" {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var buf bytes.Buffer
	err := d.pool.Client.Logs(dc.LogsOptions{Context: ctx, Container: id, OutputStream: &buf, ErrorStream: &buf,
		Stdout: true, Stderr: true, Tail: strconv.Itoa(n)})
	if err != nil && buf.Len() == 0 {
		return ""
	}
	return strings.TrimRight(buf.String(), "\n")
}

// String names the server without its password.
func (d *Docker) String() string { return "docker " + d.cfg.Image + " at " + d.Info().Address }

// String shows the configuration without the password.
func (c DockerConfig) String() string {
	pw := ""
	if c.Password != "" {
		pw = "********"
	}
	return fmt.Sprintf("{Image:%s Startup:%v Password:%s ReadyTimeout:%s Tmpfs:%v Hostname:%s}", c.Image, c.Startup, pw, c.ReadyTimeout, c.Tmpfs, c.Hostname)
}

// Restart implements Server: a clean shutdown of mysqld, then a new
// container with the new flags on the same datadir.
func (d *Docker) Restart(ctx context.Context, startup []Setting) error {
	d.mu.Lock()
	stopped := d.stopped
	d.mu.Unlock()
	if stopped {
		return errors.New("docker server already stopped")
	}
	if err := d.stopContainer(ctx, 2*time.Minute); err != nil {
		return err
	}
	return d.launch(ctx, startup)
}

// Stop implements Server: SIGTERM to mysqld, wait for it, remove the
// container and the datadir. It is safe to call more than once.
func (d *Docker) Stop(ctx context.Context) error {
	d.mu.Lock()
	if d.stopped {
		d.mu.Unlock()
		return nil
	}
	d.stopped = true
	d.mu.Unlock()
	err := d.stopContainer(ctx, 2*time.Minute)
	if rmErr := os.RemoveAll(d.dir); rmErr != nil && err == nil {
		err = fmt.Errorf("remove docker datadir: %w", rmErr)
	}
	liveDockers.remove(d)
	return err
}

// stopContainer sends SIGTERM (dockertest makes the container's stop signal
// SIGWINCH, which mysqld ignores, so docker stop would end in SIGKILL),
// waits up to grace for the exit, keeps the log and removes the container.
// A cancelled ctx does not cut the clean shutdown short.
func (d *Docker) stopContainer(ctx context.Context, grace time.Duration) error {
	id := d.containerID()
	if id == "" {
		return nil
	}
	d.liftLimits()
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), grace)
	defer cancel()
	var stopErr error
	err := d.pool.Client.KillContainer(dc.KillContainerOptions{ID: id, Signal: dc.SIGTERM, Context: wctx})
	var notRunning *dc.ContainerNotRunning
	// A server that had already exited (crashed, killed) did not fail to
	// stop: its exit status is the crash's, and the runner's recovery,
	// Restart after Alive said false, must get past here to a new container.
	crashed := errors.As(err, &notRunning)
	if err != nil && !crashed {
		stopErr = fmt.Errorf("signal docker container: %w", err)
	}
	code, err := d.pool.Client.WaitContainerWithContext(id, wctx)
	switch {
	case err != nil:
		stopErr = fmt.Errorf("docker container did not stop within %s of SIGTERM (%v); killed", grace, err)
	case code != 0 && !crashed:
		stopErr = fmt.Errorf("docker container's server exited with status %d", code)
	}
	if stopErr != nil {
		stopErr = fmt.Errorf("%w\nlast lines of its log:\n%s", stopErr, d.containerLogs(20))
	}
	if err := d.removeContainer(30 * time.Second); err != nil && stopErr == nil {
		stopErr = err
	}
	return hidePassword(stopErr, d.password)
}

// removeContainer keeps the container's log, then force-removes it.
func (d *Docker) removeContainer(timeout time.Duration) error {
	id := d.containerID()
	if id == "" {
		return nil
	}
	logs := d.containerLogs(500)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	err := d.pool.Client.RemoveContainer(dc.RemoveContainerOptions{ID: id, Force: true, RemoveVolumes: true, Context: ctx})
	var gone *dc.NoSuchContainer
	if errors.As(err, &gone) {
		err = nil
	}
	d.mu.Lock()
	d.lastLogs = logs
	if err == nil {
		d.res = nil
		d.reaper.stop()
		d.reaper = nil
	}
	d.mu.Unlock()
	if err != nil {
		return fmt.Errorf("remove docker container %s: %w", id, err)
	}
	return nil
}

// kill is the emergency stop: SIGKILL and removal, then the datadir.
func (d *Docker) kill() {
	d.mu.Lock()
	d.stopped = true
	d.mu.Unlock()
	if id := d.containerID(); id != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_ = d.pool.Client.RemoveContainer(dc.RemoveContainerOptions{ID: id, Force: true, RemoveVolumes: true, Context: ctx})
		cancel()
	}
	d.mu.Lock()
	d.reaper.stop()
	d.reaper = nil
	d.mu.Unlock()
	_ = os.RemoveAll(d.dir)
	liveDockers.remove(d)
}

// RemoveStaleContainers removes the containers (and host datadirs) that
// benchmatrix processes on this host left behind when they died without
// cleaning up, and returns the containers' names.
func RemoveStaleContainers(ctx context.Context) ([]string, error) {
	pool, err := dockerPool(ctx)
	if err != nil {
		return nil, err
	}
	hostname, _ := os.Hostname()
	list, err := pool.Client.ListContainers(dc.ListContainersOptions{All: true, Context: ctx,
		Filters: map[string][]string{"label": {dockerLabelOwnerPID}}})
	if err != nil {
		return nil, fmt.Errorf("list docker containers: %w", err)
	}
	var removed []string
	var errs []error
	for _, c := range list {
		pid, err := strconv.Atoi(c.Labels[dockerLabelOwnerPID])
		if err != nil || c.Labels[dockerLabelOwnerHost] != hostname || !stale.Gone(pid) {
			continue
		}
		err = pool.Client.RemoveContainer(dc.RemoveContainerOptions{ID: c.ID, Force: true, RemoveVolumes: true, Context: ctx})
		if removingElsewhere(err) {
			continue // another benchmatrix's sweep (or the reaper) got there first
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("remove stale container %s: %w", c.ID, err))
			continue
		}
		name := c.ID
		if len(c.Names) > 0 {
			name = strings.TrimPrefix(c.Names[0], "/")
		}
		removed = append(removed, name)
	}
	for _, base := range []string{os.TempDir(), "/dev/shm"} {
		stale.RemoveDirs(base, DockerDirPrefix, nil, nil)
	}
	return removed, errors.Join(errs...)
}

// removingElsewhere reports whether removing a container failed only
// because it is gone or already being removed by someone else (another
// run's sweep, the container's reaper): the container is on its way out,
// which is what the caller wanted.
func removingElsewhere(err error) bool {
	if err == nil {
		return false
	}
	var gone *dc.NoSuchContainer
	if errors.As(err, &gone) {
		return true
	}
	var apiErr *dc.Error
	return errors.As(err, &apiErr) && (apiErr.Status == 404 || (apiErr.Status == 409 && strings.Contains(apiErr.Message, "already in progress")))
}

// HidePassword makes sure err's text never shows password (a statement
// that carries it, echoed in a server's syntax error); errors.As and
// errors.Is still see the original.
func HidePassword(err error, password string) error { return hidePassword(err, password) }

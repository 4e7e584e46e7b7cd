package server

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"

	"benchmatrix/cache"
	"benchmatrix/catalog"
	"benchmatrix/exitcode"
	"benchmatrix/stale"
)

// SandboxConfig says how to start a sandbox.
type SandboxConfig struct {
	// Binary is the server binary; empty means mariadbd or mysqld on PATH.
	Binary string
	// Startup options added to the sandbox's own (datadir, port, ...).
	Startup []Setting
	// TempDir is where the sandbox directory is made; empty means $TMPDIR
	// or /tmp. It must sit on real storage for durability experiments.
	TempDir string
	// ReadyTimeout bounds the wait for the first successful connection.
	ReadyTimeout time.Duration
	// Limits, when any is set, puts the server in a cgroup from its first
	// start (limits.go); SetLimits writes them.
	Limits catalog.LimitSet
	// DirOwner, when benchmatrix runs as root, is given the sandbox's
	// directory, and the server its own TMPDIR (node.go).
	DirOwner string
	// InitCache, if set, keeps the initialised datadir across runs
	// (golden_cache.go).
	InitCache *cache.Cache
}

// Sandbox is a private server process: its own temporary directory, datadir
// and loopback port, started with --no-defaults so nothing from /etc leaks
// in. It never outlives the process that started it: Stop removes it, the
// parent-death signal kills it if benchmatrix dies, and KillAll is the
// emergency exit for a second interrupt.
type Sandbox struct {
	cfg     SandboxConfig
	bin     Binary
	dir     string
	port    int
	startup []Setting

	mu   sync.Mutex
	proc *exec.Cmd
	done chan struct{} // closed when proc has exited
	werr error         // proc's exit status, valid after done

	lim limitState // resource limits (limits.go)

	// A MySQL server's version and basedir (mysql.go).
	version catalog.MySQLVersion
	layout  MySQLLayout
}

var _ Server = (*Sandbox)(nil)

// SandboxDirPrefix begins the name of every sandbox directory; the rest is
// the owner's process id, so stale directories can be recognised.
const SandboxDirPrefix = "benchmatrix-sandbox-"

// NotFoundError says no server binary could be found.
type NotFoundError struct{ Searched []string }

// ExitCode implements exitcode.Coder: a missing server binary is the
// environment's problem (2).
func (e *NotFoundError) ExitCode() int { return exitcode.Usage }

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("no MySQL-family server binary found (looked for %s on PATH and in /usr/sbin, /usr/local/mysql/bin); "+
		"install one: on Debian or Ubuntu `apt-get install -y mariadb-server`, or give [server] binary = \"/path/to/mysqld\"",
		strings.Join(e.Searched, ", "))
}

var serverNames = []string{"mariadbd", "mysqld"}

// FindBinary locates the server binary to use.
func FindBinary(explicit string) (string, error) {
	if explicit != "" {
		if err := explicitBinaryProblem(explicit); err != nil { // mysql.go
			return "", err
		}
		p, err := exec.LookPath(explicit)
		if err != nil {
			return "", exitcode.UsageError(fmt.Errorf("[server] binary %q: %w", explicit, err))
		}
		return p, nil
	}
	for _, n := range serverNames {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
		for _, dir := range []string{"/usr/sbin", "/usr/local/mysql/bin", "/usr/local/bin"} {
			p := filepath.Join(dir, n)
			if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
				return p, nil
			}
		}
	}
	return "", &NotFoundError{Searched: serverNames}
}

// Binary is a server binary and what it is.
type Binary struct {
	Path    string
	Flavor  catalog.Flavor
	Version string // e.g. 10.11.19-MariaDB-0+deb12u1
}

// DetectBinary runs `BIN --version` and reads the flavor and version,
// once per binary file (detect_cache.go).
func DetectBinary(ctx context.Context, path string) (Binary, error) {
	key, ok := keyOf(path)
	if b, found := detected.Load(key); ok && found {
		return b.(Binary), nil
	}
	out, err := exec.CommandContext(ctx, path, "--no-defaults", "--version").CombinedOutput()
	if err != nil {
		return Binary{}, fmt.Errorf("%s --version: %v: %s", path, err, strings.TrimSpace(string(out)))
	}
	b, err := parseVersionLine(path, string(out))
	if err == nil && ok {
		detected.Store(key, b)
	}
	return b, err
}

func parseVersionLine(path, out string) (Binary, error) {
	f, v, err := catalog.ParseVersionLine(out)
	if err != nil {
		return Binary{}, fmt.Errorf("%s --version %w", path, err)
	}
	return Binary{Path: path, Version: v, Flavor: f}, nil
}

// StartSandbox creates a private directory, initialises a datadir in it and
// starts the server on a free 127.0.0.1 port. The server is ready when a
// real client connection succeeds.
func StartSandbox(ctx context.Context, cfg SandboxConfig) (_ *Sandbox, err error) {
	path, err := FindBinary(cfg.Binary)
	if err != nil {
		return nil, err
	}
	bin, err := DetectBinary(ctx, path)
	if err != nil {
		return nil, err
	}
	if cfg.ReadyTimeout == 0 {
		cfg.ReadyTimeout = 2 * time.Minute
	}
	RemoveStale(cfg.TempDir, nil)
	dir, err := os.MkdirTemp(cfg.TempDir, SandboxDirPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return nil, fmt.Errorf("sandbox directory: %w", err)
	}
	sb := &Sandbox{cfg: cfg, bin: bin, dir: dir}
	if bin.Flavor == catalog.MySQL {
		if sb.version, sb.layout, err = checkMySQL(bin); err != nil { // mysql.go
			_ = os.RemoveAll(dir)
			return nil, err
		}
	}
	register(sb)
	defer func() {
		if err != nil {
			sb.kill()
		}
	}()
	if err := sb.datadirFromGolden(ctx); err != nil {
		return nil, err
	}
	if err := sb.mysqlPrepare(); err != nil { // mysql.go
		return nil, err
	}
	if err := sb.ownDirs(); err != nil { // node.go
		return nil, err
	}
	if !cfg.Limits.Server().IsZero() {
		if err := sb.ensureGroup(); err != nil {
			return nil, err
		}
	}
	if err := sb.launch(ctx, cfg.Startup); err != nil {
		return nil, err
	}
	return sb, nil
}

func (s *Sandbox) datadir() string  { return filepath.Join(s.dir, "data") }
func (s *Sandbox) errorLog() string { return filepath.Join(s.dir, "error.log") }

func (s *Sandbox) tmpdir() string { return filepath.Join(s.dir, "tmp") }

// initDatadir initialises an empty datadir in s.datadir() with the
// flavor's own tool.
func (s *Sandbox) initDatadir(ctx context.Context) error {
	if err := os.MkdirAll(s.tmpdir(), 0o700); err != nil {
		return err
	}
	var cmd *exec.Cmd
	switch s.bin.Flavor {
	case catalog.MariaDB:
		script, basedir := findInstallDB(s.bin.Path)
		if script == "" {
			return fmt.Errorf("mariadb-install-db not found next to %s or on PATH; it ships with the server package (Debian: mariadb-server)", s.bin.Path)
		}
		args := []string{"--no-defaults", "--datadir=" + s.datadir(),
			"--auth-root-authentication-method=normal", "--skip-test-db", "--skip-name-resolve"}
		if basedir != "" {
			args = append(args, "--basedir="+basedir)
		}
		args = append(args, userArgs()...)
		cmd = exec.CommandContext(ctx, script, args...)
	default:
		// MySQL 5.7+: the server initialises its own datadir; root gets an
		// empty password with --initialize-insecure.
		args := []string{"--no-defaults", "--initialize-insecure", "--datadir=" + s.datadir(), "--tmpdir=" + s.tmpdir(),
			"--log-error=" + filepath.Join(s.dir, "init.log")}
		if s.layout.Basedir != "" { // a tarball (mysql.go)
			args = append(args, "--basedir="+s.layout.Basedir)
		}
		args = append(args, userArgs()...)
		cmd = exec.CommandContext(ctx, s.bin.Path, args...)
	}
	// A private TMPDIR: with a shared /tmp, concurrent initialisations
	// collide on their temporary tables ("Unknown table
	// 'mysql.tmp_proxies_priv'", "Error on delete of '/tmp/#sql-temptable-...'").
	cmd.Env = append(os.Environ(), "TMPDIR="+s.tmpdir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		if why := lowSpace(s.dir, string(out)); why != "" {
			// The cause first, not buried in the tool's whole output.
			return fmt.Errorf("initialise datadir: %s; %s said:\n%s", why, filepath.Base(cmd.Path), lastLines(string(out), 4))
		}
		tail := firstAndLast(string(out), 15, 25)
		if s.bin.Flavor == catalog.MySQL {
			tail += readTail(filepath.Join(s.dir, "init.log"), 15)
		}
		return fmt.Errorf("initialise datadir with %s: %v\n%s", cmd.Path, err, tail)
	}
	return nil
}

func findInstallDB(server string) (script, basedir string) {
	names := []string{"mariadb-install-db", "mysql_install_db"}
	base := filepath.Dir(filepath.Dir(server))
	for _, n := range names {
		p := filepath.Join(base, "scripts", n)
		if _, err := os.Stat(p); err == nil {
			return p, base // tarball layout
		}
	}
	for _, n := range names {
		for _, p := range []string{filepath.Join(filepath.Dir(server), n), filepath.Join(base, "bin", n)} {
			if _, err := os.Stat(p); err == nil {
				return p, ""
			}
		}
		if p, err := exec.LookPath(n); err == nil {
			return p, ""
		}
	}
	return "", ""
}

func userArgs() []string {
	if os.Geteuid() == 0 {
		// The servers refuse to run as root unless told to.
		return []string{"--user=root"}
	}
	return nil
}

// FreePort picks a free loopback port.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *Sandbox) args(startup []Setting) []string {
	a := []string{"--no-defaults"}
	a = append(a, userArgs()...)
	a = append(a,
		"--datadir="+s.datadir(),
		"--socket="+filepath.Join(s.dir, "mysql.sock"),
		"--port="+strconv.Itoa(s.port),
		"--bind-address=127.0.0.1",
		"--pid-file="+filepath.Join(s.dir, "mysqld.pid"),
		"--tmpdir="+s.tmpdir(),
		"--log-error="+s.errorLog(),
		"--skip-name-resolve",
		"--server-id=1",
		// Each start begins cold unless the experiment says otherwise.
		"--innodb-buffer-pool-load-at-startup=OFF",
		"--innodb-buffer-pool-dump-at-shutdown=OFF",
	)
	if s.bin.Flavor == catalog.MySQL {
		a = append(a, s.mysqlArgs()...) // mysql.go
	}
	for _, st := range startup {
		a = append(a, StartupFlag(st))
	}
	return a
}

// launch starts the server process and waits until it accepts a client.
func (s *Sandbox) launch(ctx context.Context, startup []Setting) error {
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		if s.port == 0 || attempt > 0 {
			p, err := FreePort()
			if err != nil {
				return fmt.Errorf("find a free port: %w", err)
			}
			s.port = p
		}
		lastErr = s.launchOnce(ctx, startup)
		if lastErr == nil {
			s.startup = append([]Setting(nil), startup...)
			return nil
		}
		// A port taken between our probe and the server's bind is the one
		// failure worth another try.
		if !strings.Contains(lastErr.Error(), "Bind on TCP/IP port") {
			return lastErr
		}
	}
	return lastErr
}

func (s *Sandbox) launchOnce(ctx context.Context, startup []Setting) error {
	logOffset := fileSize(s.errorLog())
	startup, err := MySQLStartup(s.bin.Flavor, s.bin.Version, startup) // mysql.go: the version's names
	if err != nil {
		return err
	}
	cmd := exec.Command(s.bin.Path, s.args(startup)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Setpgid:   true,            // a terminal's Ctrl-C goes to us, not to the server
		Pdeathsig: syscall.SIGKILL, // the server dies with benchmatrix
	}
	var stderr bytes.Buffer
	cmd.Stdout = io.Discard
	cmd.Stderr = &stderr
	cmd.Env = s.env() // node.go
	done := make(chan struct{})
	started := make(chan error, 1)
	go func() {
		// Pdeathsig fires when the thread that forked the child exits, so
		// that thread stays locked to this goroutine until the child is gone.
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			close(done)
			return
		}
		started <- nil
		err := cmd.Wait()
		s.mu.Lock()
		s.werr = err
		s.mu.Unlock()
		close(done)
	}()
	if err := <-started; err != nil {
		return fmt.Errorf("start %s: %w", s.bin.Path, err)
	}
	s.mu.Lock()
	s.proc, s.done = cmd, done
	s.mu.Unlock()
	if err := s.joinLimits(cmd.Process.Pid); err != nil {
		s.terminate(10 * time.Second)
		return fmt.Errorf("sandbox server: %w", err)
	}

	if err := s.waitReady(ctx, done); err != nil {
		s.terminate(10 * time.Second)
		tail := readTailFrom(s.errorLog(), logOffset, 20)
		if tail == "" {
			tail = lastLines(stderr.String(), 20)
		}
		if why := lowSpace(s.dir, tail); why != "" {
			return fmt.Errorf("sandbox server %s did not start: %s\nlast lines of its error log:\n%s", s.bin.Path, why, lastLines(tail, 5))
		}
		return fmt.Errorf("sandbox server %s did not become ready: %w\nlast lines of its error log:\n%s", s.bin.Path, err, tail)
	}
	return nil
}

func (s *Sandbox) waitReady(ctx context.Context, done <-chan struct{}) error {
	deadline := time.Now().Add(s.cfg.ReadyTimeout)
	cfg := s.Endpoint()
	cfg.Timeout = time.Second
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return err
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	for {
		select {
		case <-done:
			s.mu.Lock()
			werr := s.werr
			s.mu.Unlock()
			return fmt.Errorf("server exited during start-up (%v)", werr)
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := db.PingContext(pctx)
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no connection after %s: %w", s.cfg.ReadyTimeout, err)
		}
		select {
		case <-time.After(20 * time.Millisecond):
		case <-done:
		case <-ctx.Done():
		}
	}
}

// Info implements Server.
func (s *Sandbox) Info() Info {
	return Info{Provider: "sandbox", Flavor: s.bin.Flavor, Version: s.bin.Version, Binary: s.bin.Path,
		Address: net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)), Datadir: s.datadir()}
}

// Endpoint implements Server.
func (s *Sandbox) Endpoint() *mysql.Config {
	c := mysql.NewConfig()
	c.User = "root"
	c.Net = "tcp"
	c.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port))
	c.Timeout = 10 * time.Second
	return c
}

// Startup implements Server.
func (s *Sandbox) Startup() []Setting { return append([]Setting(nil), s.startup...) }

// Alive reports whether the server process is still running.
func (s *Sandbox) Alive() bool {
	s.mu.Lock()
	done := s.done
	s.mu.Unlock()
	if done == nil {
		return false
	}
	select {
	case <-done:
		return false
	default:
		return true
	}
}

// Restart implements Server: a clean shutdown, then a start with the new
// startup options on the same datadir.
func (s *Sandbox) Restart(ctx context.Context, startup []Setting) error {
	if err := s.terminate(2 * time.Minute); err != nil {
		return err
	}
	// The server, run as root, left root-owned files (tables it created,
	// its logs); a Galera joiner's rsync daemon, which runs as DirOwner,
	// writes over them in place: give them to DirOwner again (node.go).
	if err := s.ownDirs(); err != nil {
		return err
	}
	return s.launch(ctx, startup)
}

// LogTail implements Server.
func (s *Sandbox) LogTail(n int) string { return readTail(s.errorLog(), n) }

// Stop implements Server: SIGTERM, wait for the exit, remove the directory.
func (s *Sandbox) Stop(ctx context.Context) error {
	err := s.terminate(2 * time.Minute)
	if rmErr := os.RemoveAll(s.dir); rmErr != nil && err == nil {
		err = rmErr
	}
	if cgErr := s.removeLimits(); cgErr != nil && err == nil {
		err = cgErr
	}
	unregister(s)
	return err
}

// terminate sends SIGTERM and waits; after grace it sends SIGKILL.
func (s *Sandbox) terminate(grace time.Duration) error {
	s.mu.Lock()
	cmd, done := s.proc, s.done
	s.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return nil
	}
	select {
	case <-done:
		return nil
	default:
	}
	s.liftLimits()
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
		return nil
	case <-time.After(grace):
		_ = cmd.Process.Kill()
		<-done
		return fmt.Errorf("sandbox server did not stop within %s of SIGTERM; killed", grace)
	}
}

// kill is the emergency stop: SIGKILL, wait, remove the directory.
func (s *Sandbox) kill() {
	s.Kill9()
	_ = os.RemoveAll(s.dir)
	_ = s.removeLimits()
	unregister(s)
}

// Kill9 kills the server process with SIGKILL without cleaning up, as a
// crash would. For fault-injection tests.
func (s *Sandbox) Kill9() {
	s.mu.Lock()
	cmd, done := s.proc, s.done
	s.mu.Unlock()
	if cmd != nil && cmd.Process != nil {
		_ = cmd.Process.Kill()
		<-done
	}
}

// PID returns the server's process id, or 0.
func (s *Sandbox) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil || s.proc.Process == nil {
		return 0
	}
	return s.proc.Process.Pid
}

// Dir returns the sandbox's private directory.
func (s *Sandbox) Dir() string { return s.dir }

var (
	liveMu sync.Mutex
	live   = map[*Sandbox]struct{}{}
)

func register(s *Sandbox)   { liveMu.Lock(); live[s] = struct{}{}; liveMu.Unlock() }
func unregister(s *Sandbox) { liveMu.Lock(); delete(live, s); liveMu.Unlock() }

// KillAll kills every sandbox this process started and removes their
// directories. It is for the second interrupt, when a graceful stop is no
// longer wanted.
func KillAll() {
	liveMu.Lock()
	all := make([]*Sandbox, 0, len(live))
	for s := range live {
		all = append(all, s)
	}
	liveMu.Unlock()
	for _, s := range all {
		s.kill()
	}
	killOthers()
}

// RemoveStale removes sandbox directories left by benchmatrix processes that
// no longer exist (killed with SIGKILL, for example), and returns them. Their
// servers died with their parent through the parent-death signal.
func RemoveStale(tempDir string, report func(dir string)) []string {
	if tempDir == "" {
		tempDir = os.TempDir()
	}
	return stale.RemoveDirs(tempDir, SandboxDirPrefix, func(p string) { killLeftovers(p, report) }, report) // node.go
}

func fileSize(p string) int64 {
	st, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return st.Size()
}

func readTail(path string, n int) string { return readTailFrom(path, 0, n) }

func readTailFrom(path string, offset int64, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if offset > 0 {
		if _, err := f.Seek(offset, io.SeekStart); err != nil {
			return ""
		}
	}
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}

// firstAndLast keeps the first and last lines of a long output, where the
// cause and the final error of a failed tool usually are.
func firstAndLast(s string, first, last int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) <= first+last {
		return strings.Join(lines, "\n")
	}
	out := append(append([]string(nil), lines[:first]...), "...")
	return strings.Join(append(out, lines[len(lines)-last:]...), "\n")
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// lowSpaceBytes: below this much free space a server cannot be expected
// to initialise or start (its redo log alone is 96 MiB by default).
const lowSpaceBytes = 256 << 20

// lowSpace names a full (or nearly full) filesystem under dir as the cause
// of a failure, from the tool's own words ("error 28", "No space left") or
// from the free space left; "" when space is not the problem.
func lowSpace(dir, output string) string {
	said := false
	for _, sign := range []string{"error 28", "Errcode: 28", "errno: 28", "No space left", "OS error: 28"} {
		said = said || strings.Contains(output, sign)
	}
	var st syscall.Statfs_t
	if syscall.Statfs(dir, &st) != nil {
		if said {
			return "no space left on the device under " + dir
		}
		return ""
	}
	free := int64(st.Bavail) * int64(st.Bsize)
	if said || free < lowSpaceBytes {
		return fmt.Sprintf("no space left for the server under %s (%d MiB free); give TMPDIR or [server] tmpdir on a filesystem with room", dir, free>>20)
	}
	return ""
}

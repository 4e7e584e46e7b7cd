package profile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"benchmatrix/exitcode"
	"benchmatrix/stale"
)

// Perf is the perf binary's name, looked up on PATH.
const Perf = "perf"

// DirPrefix starts the name of every private directory a recording keeps
// its perf.data in, with the owner's pid after it: RemoveStale finds those
// of killed runs by it.
const DirPrefix = "benchmatrix-perf-"

// paranoidFile is the kernel setting that decides who may record, and
// euid the user benchmatrix runs as (both replaced by tests only).
var (
	paranoidFile = "/proc/sys/kernel/perf_event_paranoid"
	euid         = os.Geteuid
)

// Check reports whether perf can record the modes asked for here, before
// anything starts: perf on PATH (else what to install), and permission:
// root may record anything; others need kernel.perf_event_paranoid at most
// 1 for on-CPU stacks with kernel frames and -1 for the sched tracepoints
// of off-CPU profiles. Its errors are exit code 2.
func Check(modes ...Mode) error {
	if _, err := exec.LookPath(Perf); err != nil {
		return exitcode.UsageError(fmt.Errorf("profile: perf is not installed (Debian: apt-get install linux-perf; Ubuntu: linux-tools-$(uname -r)); or set profile = \"off\""))
	}
	if euid() == 0 {
		return nil
	}
	level, err := paranoid()
	if err != nil {
		return exitcode.UsageError(fmt.Errorf("profile: cannot read %s: %v", paranoidFile, err))
	}
	need := 1
	for _, m := range modes {
		if m == OffCPU || m == Both {
			need = -1
		}
	}
	if level > need {
		return exitcode.UsageError(fmt.Errorf("profile: not permitted: kernel.perf_event_paranoid is %d and benchmatrix does not run as root; "+
			"these profiles need it at %d or lower (sysctl -w kernel.perf_event_paranoid=%d), or run as root", level, need, need))
	}
	return nil
}

func paranoid() (int, error) {
	b, err := os.ReadFile(paranoidFile)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

// Options say what one recording takes.
type Options struct {
	Mode Mode
	PID  int // the server's host process id
	Hz   int // cpu-clock sampling rate (on-CPU)
	// Dir is where the private directory of perf.data is made (TMPDIR
	// when empty); it is removed by Result, Stop or Kill.
	Dir string
}

// Recording is one perf record running against a process.
type Recording struct {
	opt    Options
	dir    string
	data   string
	cmd    *exec.Cmd
	done   chan struct{}
	werr   error
	stderr bytes.Buffer
	start  time.Time
	stop   time.Time
}

// Start starts perf record on the process: in its own process group (a
// terminal's Ctrl-C reaches benchmatrix, which stops it) and with a
// parent-death signal, so that perf dies with a SIGKILLed benchmatrix. ctx
// ending kills it (Kill). The recording runs until Stop.
func Start(ctx context.Context, opt Options) (*Recording, error) {
	if opt.PID <= 0 {
		return nil, errors.New("profile: the server's process id is not known")
	}
	if opt.Hz <= 0 {
		opt.Hz = DefaultHz
	}
	dir, err := os.MkdirTemp(opt.Dir, fmt.Sprintf("%s%d-", DirPrefix, os.Getpid()))
	if err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	r := &Recording{opt: opt, dir: dir, data: filepath.Join(dir, "perf.data"), done: make(chan struct{})}
	args := []string{"record", "-q", "-g", "-o", r.data, "-p", strconv.Itoa(opt.PID)}
	switch opt.Mode {
	case OnCPU:
		args = append(args, "-e", "cpu-clock", "-F", strconv.Itoa(opt.Hz))
	case OffCPU:
		// The switch-out side with its stack (sched_switch runs in the
		// leaving thread's context), and the switch-in side of the same
		// threads (PERF_RECORD_SWITCH, no stack: cheap).
		args = append(args, "-e", "sched:sched_switch", "--switch-events")
	default:
		os.RemoveAll(dir)
		return nil, fmt.Errorf("profile: unknown mode %q", opt.Mode)
	}
	r.cmd = exec.Command(Perf, args...)
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	r.cmd.Stdout = &r.stderr
	r.cmd.Stderr = &r.stderr
	started := make(chan error, 1)
	go func() {
		// Pdeathsig fires when the thread that forked perf exits: that
		// thread stays locked to this goroutine until perf is gone.
		runtime.LockOSThread()
		if err := r.cmd.Start(); err != nil {
			started <- err
			close(r.done)
			return
		}
		started <- nil
		r.werr = r.cmd.Wait()
		close(r.done)
	}()
	if err := <-started; err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("profile: start perf: %w", err)
	}
	r.start = time.Now()
	go func() {
		select {
		case <-ctx.Done():
			r.Kill()
		case <-r.done:
		}
	}()
	return r, nil
}

// DefaultHz is the on-CPU sampling rate when the manifest gives none: a
// prime, so the samples do not beat with periodic work.
const DefaultHz = 499

// stopTimeout bounds perf's flush after SIGINT.
const stopTimeout = 20 * time.Second

// Interrupt asks perf to end the recording (SIGINT: it writes its data
// and exits) without waiting; the recording's window ends now. Stop waits.
func (r *Recording) Interrupt() {
	if !r.stop.IsZero() {
		return
	}
	r.stop = time.Now()
	select {
	case <-r.done:
	default:
		_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGINT)
	}
}

// Stop ends the recording as perf expects (Interrupt), waiting at most
// stopTimeout before killing it.
func (r *Recording) Stop() error {
	r.Interrupt()
	select {
	case <-r.done:
	default:
		select {
		case <-r.done:
		case <-time.After(stopTimeout):
			r.Kill()
			return fmt.Errorf("profile: perf did not stop within %s after SIGINT; killed", stopTimeout)
		}
	}
	if r.werr != nil {
		var ee *exec.ExitError
		// perf exits with the signal's code after SIGINT on some versions.
		if !errors.As(r.werr, &ee) || (ee.ExitCode() != 130 && ee.ExitCode() != -1) {
			return fmt.Errorf("profile: perf record: %v: %s", r.werr, lastLine(r.stderr.String()))
		}
	}
	return nil
}

// Kill kills perf's process group, waits for it and removes its files.
func (r *Recording) Kill() {
	select {
	case <-r.done:
	default:
		_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
		<-r.done
	}
	os.RemoveAll(r.dir)
}

// Seconds is how long the recording ran.
func (r *Recording) Seconds() float64 {
	end := r.stop
	if end.IsZero() {
		end = time.Now()
	}
	return end.Sub(r.start).Seconds()
}

// Result reads the stopped recording with perf script, builds the
// profile, and removes perf.data and its directory whatever happens.
// mainComm is the server process's own name (threads named otherwise are
// grouped by name).
func (r *Recording) Result(ctx context.Context, mainComm string) (*Profile, error) {
	defer os.RemoveAll(r.dir)
	fields := "comm,tid,time,event,ip,sym,dso,period"
	args := []string{"script", "-i", r.data, "-F", fields}
	if r.opt.Mode == OffCPU {
		args = []string{"script", "-i", r.data, "-F", "comm,tid,time,event,ip,sym,dso,trace", "--show-switch-events"}
	}
	cmd := exec.CommandContext(ctx, Perf, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("profile: perf script: %w", err)
	}
	recs, _, perr := Parse(out)
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("profile: perf script: %v: %s", err, lastLine(errb.String()))
	}
	if perr != nil {
		return nil, fmt.Errorf("profile: reading perf script: %w", perr)
	}
	return Build(r.opt.Mode, recs, mainComm, int64(1e9/r.opt.Hz)), nil
}

// Build makes the profile of a mode from perf script's records.
func Build(mode Mode, recs []Record, mainComm string, period int64) *Profile {
	kinds := Classify(recs, mainComm)
	if mode == OffCPU {
		return BuildOffCPU(recs, kinds)
	}
	return BuildOnCPU(recs, kinds, period)
}

// ProcessName is the comm of a process ("mariadbd"), or "" when it cannot
// be read.
func ProcessName(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// RemoveStale removes the perf directories that benchmatrix processes no
// longer running left in dir (TMPDIR when empty): those of a killed run,
// whose perf died with it. report names each.
func RemoveStale(dir string, report func(path string)) []string {
	if dir == "" {
		dir = os.TempDir()
	}
	return stale.RemoveDirs(dir, DirPrefix, nil, report)
}

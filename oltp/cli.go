package oltp

// This file is `benchmatrix oltp`: a sysbench 1.0.20 command line
// (reference/sysbench.md §1.4, §4) parsed by a pure function,
// ParseCommandLine, and run by Main.
//
// Parsing follows sysbench, not the flag package: options are --name=value
// (or a bare --flag for a boolean, meaning on) and may appear anywhere; the
// first word that is not an option is the workload and the second the
// command. "--threads 8" is not "--threads=8" in sysbench (8 would become the
// workload), so a non-boolean option without "=" is an error that says so.
//
// Connection choices (documented here because they differ from sysbench):
//   - Lists (--mysql-host=a,b --mysql-port=3306,3307 --mysql-socket=...) are
//     accepted, but only the first value of each is used: the engine takes one
//     *mysql.Config. sysbench would spread connections round-robin; a warning
//     says so.
//   - Host "localhost" (or none) is the Unix socket, as libmysqlclient (and so
//     sysbench) has it (socket.go): --mysql-socket, else MYSQL_UNIX_PORT,
//     else the socket of the client configuration's [client] groups, else
//     the distribution's default path; --mysql-port is then ignored, as
//     libmysqlclient ignores it. Any other host is TCP.
//   - --mysql-ssl=on means TLS without certificate verification (sysbench
//     1.0.20 passes no CA unless files sit in the working directory);
//     =preferred and =verify_identity are go-sql-driver's "preferred" and
//     "true".
//   - The password is never printed: not in errors (which name options, not
//     their values), not in JSON, and every engine error is scrubbed of it
//     before printing. Nothing here formats a DSN.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/mattn/go-isatty"

	"benchmatrix/engine"
	"benchmatrix/sqlconn"
	"benchmatrix/version"
)

// Exit codes of Main.
const (
	ExitOK      = 0 // the command succeeded
	ExitFailure = 1 // the command failed at run time (sysbench's FATAL)
	// ExitUsage: the command line is invalid. sysbench 1.0.20 exits 1 for
	// every command-line error (invalid option, unknown test or command),
	// and `benchmatrix oltp` keeps sysbench's exit codes: this is the one
	// place where benchmatrix's own "2 for invalid usage" does not hold.
	ExitUsage       = 1
	ExitInterrupted = 130 // ctx was cancelled; what was measured was printed
	// ExitForcedShutdown: --forced-shutdown cut the run; the report was
	// printed. sysbench 1.0.20 exits with 2 then (exit(2) in
	// sigalrm_forced_shutdown_handler), the value of ExitUsage.
	ExitForcedShutdown = 2
)

// forcedShutdownMsg is sysbench 1.0.20's FATAL message when the grace
// after --time runs out.
const forcedShutdownMsg = "The --max-time limit has expired, forcing shutdown..."

// Commands lists the commands sysbench's OLTP scripts implement, in
// sysbench's order. "warmup" (sysbench master's name) is accepted for
// "prewarm".
var Commands = []string{"prepare", "prewarm", "run", "cleanup", "help"}

// Invocation is a parsed `benchmatrix oltp` command line.
type Invocation struct {
	Workload string // e.g. "oltp_read_write" (a path or .lua suffix is stripped)
	Command  string // one of Commands; "" only with ShowHelp or ShowVersion
	Options  Options
	Conn     Connection
	// Config is built from Conn (see Connection.Config); nil with
	// ShowHelp or ShowVersion.
	Config      *mysql.Config
	Format      string // "text" (sysbench's layout) or "json"
	Verbosity   int    // sysbench's 0..5; below 3 only FATAL messages print
	ShowHelp    bool   // --help
	ShowVersion bool   // --version
	// TestName is the test as sysbench names it in messages: the base name
	// of the script path or name given ("oltp_read_write.lua" for
	// /usr/share/sysbench/oltp_read_write.lua, "oltp_read_write" for the
	// bare name).
	TestName string
	// Legacy is the 0.5-era script given by --test (legacy.go), or nil.
	Legacy *LegacyScript
	// Extras: print benchmatrix's block after sysbench's report, and its
	// own options after sysbench's text of `WORKLOAD help` (--extras);
	// JSON always has it all.
	Extras bool
	// FromStdin: no test was named, so sysbench would read a Lua script
	// from standard input (Main handles it).
	FromStdin bool
	// Warnings are accepted-but-partly-honoured options, for stderr.
	Warnings []string
	// Notices are sysbench's own WARNING lines (deprecated options), in
	// sysbench's order; ToStderr for the ones sysbench writes there.
	Notices []Notice
}

// Notice is a line sysbench prints before its banner.
type Notice struct {
	Text     string
	ToStderr bool
}

// Connection is the --mysql-* options as given. Its String method hides the
// password, so printing a Connection (or an Invocation) is safe.
type Connection struct {
	Hosts       []string
	Ports       []int
	Sockets     []string
	User        string
	Password    string
	DB          string
	SSL         string // off, on, preferred or verify_identity
	Compression bool
	DryRun      bool // --mysql-dry-run: connect nowhere, send nothing (dryrun.go)
}

// DefaultConnection is sysbench's MySQL driver defaults.
func DefaultConnection() Connection {
	return Connection{Hosts: []string{"localhost"}, Ports: []int{3306}, User: "sbtest", DB: "sbtest", SSL: "off"}
}

// String describes the connection without the password.
func (c Connection) String() string {
	pw := ""
	if c.Password != "" {
		pw = " password=***"
	}
	return fmt.Sprintf("{hosts=%v ports=%v sockets=%v user=%q%s db=%q ssl=%s compression=%t}",
		c.Hosts, c.Ports, c.Sockets, c.User, pw, c.DB, c.SSL, c.Compression)
}

// GoString is String, so %#v does not print the password either.
func (c Connection) GoString() string { return "oltp.Connection" + c.String() }

// Config builds the go-sql-driver config for the first host, port and
// socket (see the file comment for the localhost and TLS rules), finding
// localhost's socket in the process's environment and client
// configuration files.
func (c Connection) Config() (*mysql.Config, error) {
	return c.config(systemSocket)
}

func (c Connection) config(defaultSocket func() string) (*mysql.Config, error) {
	cfg := mysql.NewConfig()
	cfg.User = c.User
	cfg.Passwd = c.Password
	cfg.DBName = c.DB
	host, port := "localhost", 3306
	if len(c.Hosts) > 0 {
		host = c.Hosts[0]
	}
	if len(c.Ports) > 0 {
		port = c.Ports[0]
	}
	switch {
	case host != "localhost" && host != "":
		cfg.Net, cfg.Addr = "tcp", net.JoinHostPort(host, strconv.Itoa(port))
	case len(c.Sockets) > 0:
		cfg.Net, cfg.Addr = "unix", c.Sockets[0]
	default:
		cfg.Net, cfg.Addr = "unix", defaultSocket()
	}
	switch c.SSL {
	case "", "off":
	case "on":
		cfg.TLSConfig = "skip-verify"
	case "preferred":
		cfg.TLSConfig = "preferred"
	case "verify_identity":
		cfg.TLSConfig = "true"
	default:
		return nil, &UsageError{Option: "--mysql-ssl", Msg: fmt.Sprintf("invalid value for --mysql-ssl: %q", c.SSL)}
	}
	if c.DryRun {
		cfg.Net, cfg.Addr = dryRunNet, ""
	}
	if c.Compression {
		if err := cfg.Apply(mysql.EnableCompression(true)); err != nil {
			return nil, err
		}
	}
	return cfg, nil
}

// UsageError is an invalid command line. Option names the offending option
// as written ("--foo"), when there is one. Messages never carry option
// values that could be secret.
type UsageError struct {
	Option string
	Msg    string
	// Kind is how sysbench reports it (what Main prints around Msg).
	Kind UsageKind
}

// UsageKind is how sysbench 1.0.20 reports a command-line error; every
// kind exits 1.
type UsageKind int

const (
	// KindInvalidOption: the banner, then "invalid option: --name=value"
	// on stderr (Msg holds the whole line and any hint after it).
	KindInvalidOption UsageKind = iota
	// KindUnrecognized: no banner; "Unrecognized command line argument:
	// X" on stderr (a third word).
	KindUnrecognized
	// KindFatal: the banner, then "FATAL: Msg" on stdout (unknown test,
	// missing command, invalid combinations).
	KindFatal
	// KindUnknownCommand: the banner, then "Unknown command: X" on stderr.
	KindUnknownCommand
)

func (e *UsageError) Error() string { return e.Msg }

func usagef(option, format string, args ...any) *UsageError {
	return &UsageError{Option: option, Msg: fmt.Sprintf(format, args...)}
}

// booleanOptions reports which options of options.go are on/off, so that a
// bare --name means --name=on. An option is boolean when it takes on and off
// and refuses anything else; asking Options.Set keeps this in step with
// options.go as options are added.
var booleanOptions = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, name := range OptionNames() {
		o := DefaultOptions()
		m[name] = o.Set(name, "on") == nil && o.Set(name, "off") == nil && o.Set(name, "maybe") != nil
	}
	return m
})

// ParseCommandLine parses a sysbench 1.0 command line (without the program
// name, with "sysbench" read as "benchmatrix oltp"). It does no I/O. Every
// error is a *UsageError.
func ParseCommandLine(args []string) (Invocation, error) {
	inv, err := parseCommandLine(args)
	if err != nil {
		return Invocation{}, err
	}
	return inv, nil
}

// parseCommandLine is ParseCommandLine that also returns what it parsed
// before an error (Main needs --verbosity to print the error as sysbench
// does).
func parseCommandLine(args []string) (Invocation, error) {
	p := parser{inv: Invocation{
		Options:   DefaultOptions(),
		Conn:      DefaultConnection(),
		Format:    "text",
		Verbosity: 3,
	}}
	// sysbench reads the words in order: the first is the test (unless
	// --test names it), the second the command, a third is an error that
	// is reported before anything else. --test names the test wherever it
	// stands.
	args, notices, err := expandConfigFiles(args) // configfile.go
	if err != nil {
		return p.inv, err
	}
	p.inv.Notices = append(p.inv.Notices, notices...)
	var test, command string
	viaTest := false
	for _, arg := range args {
		if strings.HasPrefix(arg, "--") {
			if name, value, ok := strings.Cut(arg[2:], "="); ok && name == "test" {
				test, viaTest = value, true
				p.inv.Notices = append(p.inv.Notices, Notice{ToStderr: true,
					Text: "WARNING: the --test option is deprecated. You can pass a script name or path on the command line without any options."})
			}
			continue
		}
		switch {
		case test == "" && !viaTest:
			test = arg
		case command == "":
			command = arg
		default:
			return p.inv, &UsageError{Kind: KindUnrecognized, Msg: "Unrecognized command line argument: " + arg}
		}
	}
	p.inv.TestName = filepath.Base(filepath.ToSlash(test))
	p.inv.Legacy = legacyScript(test)
	// Every option is parsed, so that --verbosity counts wherever it
	// stands; the first error is the one reported.
	var first error
	for _, arg := range args {
		if !strings.HasPrefix(arg, "--") {
			continue
		}
		if err := p.option(arg[2:]); err != nil && first == nil {
			first = err
		}
	}
	if first != nil {
		return p.inv, first
	}
	p.deprecated()
	inv := p.inv
	if p.forced != nil {
		inv.Options.ForcedShutdown = p.forced.grace(inv.Options.Time)
	}
	if test == "" {
		if inv.ShowHelp || inv.ShowVersion {
			return inv, nil
		}
		inv.FromStdin = true
		return inv, nil
	}
	if inv.Legacy != nil {
		if inv.Legacy.Workload == "" {
			return inv, &UsageError{Kind: KindFatal, Msg: inv.Legacy.unsupported()}
		}
		inv.Workload = inv.Legacy.Workload
		inv.Legacy.apply(&inv.Options, p.numThreads)
	} else {
		inv.Workload = workloadName(test)
	}
	if inv.ShowHelp || inv.ShowVersion {
		return inv, nil
	}
	if !KnownWorkload(inv.Workload) {
		return inv, &UsageError{Kind: KindFatal, Msg: unknownTest(test)}
	}
	inv.Options.Workload = inv.Workload
	if command == "" {
		return inv, &UsageError{Kind: KindFatal, Msg: "Command is required. Supported commands: " + strings.Join(Commands, ", ")}
	}
	inv.Command = command
	if inv.Command == "warmup" {
		inv.Command = "prewarm"
	}
	// The legacy scripts define prepare, run and cleanup only.
	if !isCommand(inv.Command) || inv.Legacy != nil && inv.Command == "prewarm" {
		return inv, &UsageError{Kind: KindUnknownCommand, Msg: "Unknown command: " + command}
	}
	if err := checkOptions(inv.Command, inv.Options); err != nil {
		return inv, err
	}
	if inv.Conn.DryRun && inv.Command != "run" && inv.Command != "help" {
		return inv, &UsageError{Kind: KindFatal, Option: "--mysql-dry-run",
			Msg: "--mysql-dry-run is supported by benchmatrix oltp for run only (sysbench also goes through " + inv.Command + " without a server)"}
	}
	cfg, err := inv.Conn.Config()
	if err != nil {
		return inv, err
	}
	inv.Config = cfg
	if len(inv.Conn.Hosts) > 1 || len(inv.Conn.Ports) > 1 || len(inv.Conn.Sockets) > 1 {
		inv.Warnings = append(inv.Warnings, fmt.Sprintf(
			"several --mysql-host/--mysql-port/--mysql-socket values: every connection uses the first (%s); sysbench would spread them round-robin",
			cfg.Addr))
	}
	return inv, nil
}

// unknownTest is sysbench's message for a test it cannot find; a Lua
// file that exists but is not one of sysbench's bundled OLTP scripts gets
// a message saying what benchmatrix oltp runs instead.
func unknownTest(test string) string {
	if st, err := os.Stat(test); err == nil && st.Mode().IsRegular() {
		return fmt.Sprintf("'%s' is not one of sysbench's bundled OLTP scripts: benchmatrix oltp runs its built-in workloads (%s) and the 0.5-era oltp.lua, not Lua scripts",
			test, strings.Join(Workloads(), ", "))
	}
	return fmt.Sprintf("Cannot find benchmark '%s': no such built-in test, file or module", test)
}

// deprecated applies sysbench 1.0.20's deprecated aliases as it does
// (sysbench.c, init()): --num-threads above 1, --max-requests, --max-time
// and --tx-rate above 0 replace the new option whatever its value or
// position, each with sysbench's WARNING.
func (p *parser) deprecated() {
	o := &p.inv.Options
	warn := func(old, new string) {
		p.inv.Notices = append(p.inv.Notices, Notice{Text: fmt.Sprintf("WARNING: --%s is deprecated, use --%s instead", old, new)})
	}
	if p.numThreads > 1 {
		warn("num-threads", "threads")
		o.Threads = p.numThreads
	}
	if p.maxRequests > 0 {
		warn("max-requests", "events")
		o.Events = p.maxRequests
	}
	if p.maxTime > 0 {
		warn("max-time", "time")
		o.Time = p.maxTime
	}
	if p.txRate > 0 {
		warn("tx-rate", "rate")
		o.Rate = p.txRate
	}
}

// parser holds the state of one ParseCommandLine call.
type parser struct {
	inv    Invocation
	forced *forcedShutdown // the last --forced-shutdown, resolved against --time at the end
	// sysbench's deprecated aliases, applied after every option is read.
	numThreads  int
	maxRequests int64
	maxTime     time.Duration
	txRate      float64
}

// forcedShutdown is a --forced-shutdown value as sysbench 1.0.20 reads it
// (src/sysbench.c, init()): "off" (any case) disables it; a number is
// seconds after the --time limit; "N%" is N percent of --time; no value
// at all ("--forced-shutdown" or "--forced-shutdown=") is 5% of --time.
// Percentages are whole seconds rounded down, as sysbench's unsigned
// arithmetic makes them. Unlike sysbench, seconds may have fractions (as
// every duration here may), and a negative value is refused rather than
// wrapped around.
type forcedShutdown struct {
	off bool
	pct float64       // percent of --time, when sec < 0
	sec time.Duration // -1: a percentage
}

func parseForcedShutdown(value string, hasValue bool) (forcedShutdown, error) {
	v := strings.TrimSpace(value)
	switch {
	case !hasValue || v == "":
		return forcedShutdown{pct: 5, sec: -1}, nil
	case strings.EqualFold(v, "off"):
		return forcedShutdown{off: true}, nil
	case strings.HasSuffix(v, "%"):
		f, err := strconv.ParseFloat(strings.TrimSuffix(v, "%"), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
			return forcedShutdown{}, errors.New("not a percentage")
		}
		return forcedShutdown{pct: f, sec: -1}, nil
	}
	d, err := ParseSeconds(v)
	if err != nil {
		return forcedShutdown{}, err
	}
	return forcedShutdown{sec: d}, nil
}

// grace is the value for Options.ForcedShutdown with the given --time.
// Without a time limit sysbench does not read the option, and it is off.
// sysbench's 0, which cuts at the time limit itself, is the smallest
// grace there is.
func (f forcedShutdown) grace(limit time.Duration) time.Duration {
	if f.off || limit <= 0 {
		return 0
	}
	g := f.sec
	if g < 0 {
		g = time.Duration(f.pct / 100 * limit.Seconds() * float64(time.Second)).Truncate(time.Second)
	}
	return max(g, time.Nanosecond)
}

// option applies one "name[=value]" (the part after "--"). Its errors
// read as sysbench's, "invalid option: --name=value", followed by why (for
// a value) or by the 1.0 name of a 0.5-era option (legacy.go); a value is
// never shown for an option whose name mentions a password.
func (p *parser) option(body string) error {
	err := p.setOption(body)
	var ue *UsageError
	if !errors.As(err, &ue) || ue.Kind != KindInvalidOption {
		return err
	}
	shown := "--" + body
	if name, _, ok := strings.Cut(body, "="); ok && secretName(name) {
		shown = "--" + name + "=***"
	}
	if !isPrintableName(shown) || len(shown) > 100 {
		shown = quoteArg(shown)
	}
	msg := "invalid option: " + shown
	switch {
	case ue.Msg == "":
		if hint := legacyHint(body); hint != "" {
			msg += "\n" + hint
		}
	default:
		msg += " (" + ue.Msg + ")"
	}
	return &UsageError{Option: ue.Option, Msg: msg, Kind: KindInvalidOption}
}

// secretName: an option name that may carry a password (misspellings of
// --mysql-password included), whose value is never printed.
func secretName(name string) bool {
	n := strings.ToLower(name)
	return strings.Contains(n, "pas") || strings.Contains(n, "pw") || strings.Contains(n, "secret")
}

// SecretArgs finds the passwords on a sysbench command line (without the
// program name): for each "--name=value" whose name may carry a password
// (secretName), the argument with its value masked.
func SecretArgs(args []string) map[int]string {
	found := map[int]string{}
	for i, a := range args {
		if name, v, ok := strings.Cut(strings.TrimPrefix(a, "--"), "="); ok && strings.HasPrefix(a, "--") && v != "" && secretName(name) {
			found[i] = "--" + name + "=*****"
		}
	}
	return found
}

// unknownOption is setOption's error for a name it does not know; option
// turns it into sysbench's message.
func unknownOption(disp string) error { return &UsageError{Option: disp} }

func (p *parser) setOption(body string) error {
	name, value, hasValue := strings.Cut(body, "=")
	if strings.TrimSpace(name) == "" {
		return usagef("--", "malformed option: \"--\" must be followed by an option name")
	}
	if inv := &p.inv; inv.Legacy != nil {
		// A 0.5-era script reads its --oltp-* options (and sysbench
		// accepts any other option silently for such scripts).
		if done, err := inv.Legacy.option(&inv.Options, name, value, hasValue); done {
			if err != nil {
				return usagef("--"+name, "%v", err)
			}
			return nil
		}
		if legacyIgnores(name) { // a 1.0 script's option (legacy.go)
			return nil
		}
	}
	disp := "--" + name
	if !isPrintableName(disp) {
		disp = strconv.Quote(disp)
	}
	key := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(name)), "-", "_")
	inv := &p.inv

	// need returns the value, or an error when a non-boolean option has
	// none; flag parses a boolean, bare meaning on.
	need := func(arg string) (string, error) {
		if !hasValue {
			return "", usagef(disp, "option %s needs a value: write %s=%s (sysbench does not accept %s %s)", disp, disp, arg, disp, arg)
		}
		return value, nil
	}
	flag := func() (bool, error) {
		if !hasValue {
			return true, nil
		}
		b, ok := parseOnOff(value)
		if !ok {
			return false, usagef(disp, "invalid value for %s: %s (want on or off)", disp, quoteArg(value))
		}
		return b, nil
	}
	switch key {
	case "test":
		// Read by ParseCommandLine (it names the test).
		return nil
	case "extras":
		b, err := flag()
		inv.Extras = b
		return err
	case "num_threads":
		v, err := need("N")
		if err != nil {
			return err
		}
		n, perr := strconv.Atoi(strings.TrimSpace(v))
		if perr != nil || n < 0 {
			return usagef(disp, "%s is not a thread count", quoteArg(v))
		}
		p.numThreads = n
	case "max_requests":
		v, err := need("N")
		if err != nil {
			return err
		}
		n, perr := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if perr != nil || n < 0 {
			return usagef(disp, "%s is not an event count", quoteArg(v))
		}
		p.maxRequests = n
	case "max_time":
		v, err := need("N")
		if err != nil {
			return err
		}
		d, perr := ParseSeconds(strings.TrimSpace(v))
		if perr != nil {
			return usagef(disp, "%v", perr)
		}
		p.maxTime = d
	case "tx_rate":
		v, err := need("N")
		if err != nil {
			return err
		}
		f, perr := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if perr != nil || f < 0 || math.IsNaN(f) || math.IsInf(f, 0) {
			return usagef(disp, "%s is not a rate", quoteArg(v))
		}
		p.txRate = f
	case "help":
		b, err := flag()
		inv.ShowHelp = b
		return err
	case "version":
		b, err := flag()
		inv.ShowVersion = b
		return err
	case "format":
		v, err := need("text|json")
		if err != nil {
			return err
		}
		if v != "text" && v != "json" {
			return usagef(disp, "invalid value for %s: %s (want text or json)", disp, quoteArg(v))
		}
		inv.Format = v
	case "verbosity":
		v, err := need("N")
		if err != nil {
			return err
		}
		n, perr := strconv.Atoi(strings.TrimSpace(v))
		if perr != nil || n < 0 || n > 5 {
			return usagef(disp, "invalid value for %s: %s (want 0..5)", disp, quoteArg(v))
		}
		inv.Verbosity = n
	case "db_driver":
		v, err := need("mysql")
		if err != nil {
			return err
		}
		if v != "mysql" {
			return usagef(disp, "invalid value for %s: only mysql is supported", disp)
		}
	case "mysql_host":
		v, err := need("HOST[,HOST...]")
		if err != nil {
			return err
		}
		hosts := splitCommaList(v)
		if len(hosts) == 0 {
			return usagef(disp, "invalid value for %s: no host given", disp)
		}
		inv.Conn.Hosts = hosts
	case "mysql_port":
		v, err := need("PORT[,PORT...]")
		if err != nil {
			return err
		}
		var ports []int
		for _, s := range splitCommaList(v) {
			n, perr := strconv.Atoi(s)
			if perr != nil || n < 1 || n > 65535 {
				return usagef(disp, "invalid value for %s: %s is not a port number", disp, quoteArg(s))
			}
			ports = append(ports, n)
		}
		if len(ports) == 0 {
			return usagef(disp, "invalid value for %s: no port given", disp)
		}
		inv.Conn.Ports = ports
	case "mysql_socket":
		v, err := need("PATH[,PATH...]")
		if err != nil {
			return err
		}
		inv.Conn.Sockets = splitCommaList(v)
	case "mysql_user":
		v, err := need("STRING")
		inv.Conn.User = v
		return err
	case "mysql_password":
		v, err := need("STRING")
		inv.Conn.Password = v
		return err
	case "mysql_db":
		v, err := need("STRING")
		inv.Conn.DB = v
		return err
	case "mysql_ssl":
		if !hasValue {
			inv.Conn.SSL = "on"
			return nil
		}
		v := strings.ToLower(strings.TrimSpace(value))
		if b, ok := parseOnOff(v); ok {
			inv.Conn.SSL = map[bool]string{true: "on", false: "off"}[b]
			return nil
		}
		switch v {
		case "disabled":
			inv.Conn.SSL = "off"
		case "required":
			inv.Conn.SSL = "on"
		case "preferred", "verify_identity":
			inv.Conn.SSL = v
		default:
			return usagef(disp, "invalid value for %s: %s (want on, off, preferred or verify_identity)", disp, quoteArg(value))
		}
	case "mysql_ssl_cipher":
		if hasValue && value != "" {
			return usagef(disp, "%s is not supported (Go's TLS chooses the cipher)", disp)
		}
	case "mysql_compression":
		b, err := flag()
		inv.Conn.Compression = b
		return err
	case "mysql_dry_run":
		b, err := flag()
		inv.Conn.DryRun = b
		return err
	case "mysql_debug", "db_debug", "debug", "validate":
		// Accepted for compatibility; they change nothing here.
		_, err := flag()
		return err
	case "forced_shutdown":
		fs, err := parseForcedShutdown(value, hasValue)
		if err != nil {
			return usagef(disp, "invalid value for %s: %s (want off, seconds or N%%)", disp, quoteArg(value))
		}
		p.forced = &fs
	case "thread_stack_size", "pgsql_variant":
		// Accepted and ignored: Go sizes stacks itself; only MySQL is supported.
		_, err := need("STRING")
		return err
	case "report_checkpoints":
		v, err := need("[LIST,...]")
		if err != nil {
			return err
		}
		cps, err := parseCheckpoints(v)
		if err != nil {
			return err
		}
		inv.Options.ReportCheckpoints = cps
	case "mysql_ssl_ca", "mysql_ssl_cert", "mysql_ssl_key":
		return usagef(disp, "%s is not supported by benchmatrix oltp", disp)
	case "workload":
		// The workload is the first word, as in sysbench; Options.Set's
		// "workload" key is not a command-line option.
		return unknownOption(disp)
	default:
		canon, ok := CanonicalOption(name)
		if !ok {
			if inv.Legacy != nil || inv.TestName == "." {
				// sysbench runs legacy scripts, and a script read from
				// standard input, with any option.
				return nil
			}
			return unknownOption(disp)
		}
		if !hasValue {
			if !booleanOptions()[canon] {
				_, err := need("VALUE")
				return err
			}
			value = "on"
		}
		if err := inv.Options.Set(name, value); err != nil {
			var unknown *UnknownOptionError
			if errors.As(err, &unknown) {
				return unknownOption(disp)
			}
			if inner := errors.Unwrap(err); inner != nil {
				err = inner
			}
			return usagef(disp, "%v", err)
		}
	}
	return nil
}

// maxCheckpoints is sysbench's MAX_CHECKPOINTS.
const maxCheckpoints = 256

// parseCheckpoints reads --report-checkpoints as sysbench does: whole
// seconds from 0 to INT_MAX, at most 256 of them, sorted; an empty list
// is none. Errors are sysbench's FATAL messages.
func parseCheckpoints(v string) ([]time.Duration, error) {
	var out []time.Duration
	for _, s := range splitCommaList(v) {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 || n > math.MaxInt32 {
			return nil, &UsageError{Kind: KindFatal, Option: "--report-checkpoints",
				Msg: fmt.Sprintf("Invalid value for --report-checkpoints: '%s'", s)}
		}
		if len(out) == maxCheckpoints {
			return nil, &UsageError{Kind: KindFatal, Option: "--report-checkpoints",
				Msg: fmt.Sprintf("Too many checkpoints in --report-checkpoints (up to %d can be defined)", maxCheckpoints)}
		}
		out = append(out, time.Duration(n)*time.Second)
	}
	slices.Sort(out)
	return out, nil
}

// checkOptions checks what single options cannot: sysbench's own
// combination rules, finite numbers, and Options.Validate.
func checkOptions(command string, o Options) error {
	if o.Histogram && o.Percentile == 0 {
		return &UsageError{Kind: KindFatal, Option: "--histogram", Msg: "--histogram cannot be used with --percentile=0"}
	}
	v := reflect.ValueOf(o)
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
		switch {
		case f.Kind() == reflect.Float64 && (math.IsNaN(f.Float()) || math.IsInf(f.Float(), 0)):
			return usagef("--"+name, "invalid value for --%s: not a finite number", name)
		case f.Type() == reflect.TypeOf(time.Duration(0)) && f.Int() < 0:
			return usagef("--"+name, "invalid value for --%s: out of range", name)
		}
	}
	if command == "help" {
		return nil
	}
	if command != "run" && o.Time == 0 && o.Events == 0 {
		o.Time = time.Second // only run needs an end
	}
	if err := o.Validate(); err != nil {
		return &UsageError{Kind: KindFatal, Msg: err.Error()}
	}
	return nil
}

// workloadName turns "/usr/share/sysbench/oltp_read_write.lua" or
// "oltp_read_write" into "oltp_read_write".
func workloadName(arg string) string {
	base := filepath.Base(filepath.ToSlash(arg))
	if base == "." || base == "/" {
		base = arg
	}
	return strings.TrimSuffix(base, ".lua")
}

func isCommand(c string) bool {
	for _, k := range Commands {
		if c == k {
			return true
		}
	}
	return false
}

func parseOnOff(v string) (bool, bool) {
	b, err := ParseBool(v)
	return b, err == nil
}

// splitCommaList splits sysbench's comma lists, dropping empty items.
func splitCommaList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func isPrintableName(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == '\uFFFD' {
			return false
		}
	}
	return true
}

// quoteArg quotes a value for a message, shortened so that a pasted blob
// cannot flood the terminal.
func quoteArg(s string) string {
	const max = 80
	if len(s) > max {
		s = s[:max] + "..."
	}
	return strconv.Quote(s)
}

// ---- running ----

// engineFuncs is the engine as Main sees it; tests substitute fakes.
type engineFuncs struct {
	prepare, prewarm, cleanup func(ctx context.Context, cfg *mysql.Config, o Options, log io.Writer) error
	run                       func(ctx context.Context, cfg *mysql.Config, o Options, report func(Interval)) (*Result, error)
}

// engineWith is the real engine, its runs using procs (nil: none).
func engineWith(procs sqlconn.ProcReserver) engineFuncs {
	return engineFuncs{
		prepare: Prepare, prewarm: Prewarm, cleanup: Cleanup,
		run: func(ctx context.Context, cfg *mysql.Config, o Options, report func(Interval)) (*Result, error) {
			return RunWith(ctx, cfg, o, report, procs)
		},
	}
}

// Main runs `benchmatrix oltp [options] WORKLOAD prepare|prewarm|run|cleanup|help`
// and returns the exit code (0 ok, 1 run-time failure, 2 invalid usage
// naming the bad option, 130 interrupted). args are the words after
// "benchmatrix oltp", exactly as they would follow "sysbench".
//
// Text output goes to stdout in sysbench 1.0.20's layout, FATAL messages
// included (sysbench prints them there too); usage errors and warnings go
// to stderr. With --format=json stdout holds exactly one JSON document and
// the engine's progress lines go to stderr.
//
// A run cut by --forced-shutdown prints sysbench's "FATAL: The --max-time
// limit has expired, forcing shutdown..." and the report (without the
// histogram, which sysbench's forced shutdown does not print either), and
// returns ExitForcedShutdown (2).
//
// Main is MainWith without a ProcReserver.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return MainWith(ctx, args, stdout, stderr, nil)
}

// MainWith is Main whose runs use procs (see RunWith); the command that
// owns the process passes the one that may change GOMAXPROCS.
func MainWith(ctx context.Context, args []string, stdout, stderr io.Writer, procs sqlconn.ProcReserver) int {
	return mainWith(ctx, args, os.Stdin, stdout, stderr, engineWith(procs))
}

func mainWith(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, eng engineFuncs) int {
	inv, err := parseCommandLine(args)
	for _, n := range inv.Notices {
		if n.ToStderr {
			fmt.Fprintln(stderr, n.Text)
		} else if inv.Verbosity >= 2 {
			fmt.Fprintln(stdout, n.Text)
		}
	}
	banner := func() {
		if inv.Verbosity >= 3 && inv.Format != "json" {
			WriteBanner(stdout)
		}
	}
	if err != nil {
		// sysbench's layouts (sysbench.c): a third word is reported before
		// the banner; an invalid option or unknown command after it on
		// stderr; the rest as FATAL on stdout. All exit 1.
		ue := &UsageError{Kind: KindFatal, Msg: err.Error()}
		errors.As(err, &ue)
		ue = &UsageError{Kind: ue.Kind, Option: ue.Option, Msg: redactPassword(ue.Msg, inv.Conn.Password)}
		switch ue.Kind {
		case KindUnrecognized:
			fmt.Fprintln(stderr, ue.Msg)
		case KindFatal:
			banner()
			fmt.Fprintf(stdout, "FATAL: %s\n", ue.Msg)
		default:
			banner()
			fmt.Fprintln(stderr, ue.Msg)
		}
		return ExitUsage
	}
	for _, w := range inv.Warnings {
		fmt.Fprintf(stderr, "benchmatrix oltp: warning: %s\n", w)
	}
	switch {
	case inv.ShowVersion:
		fmt.Fprintln(stdout, Banner())
		return ExitOK
	case inv.ShowHelp:
		writeUsage(stdout)
		return ExitOK
	case inv.FromStdin:
		return fromStdin(inv, stdin, stdout, stderr, banner)
	}
	x := &execution{ctx: ctx, inv: inv, eng: eng, stdout: &lockedWriter{w: stdout}, stderr: &lockedWriter{w: stderr}}
	return x.do()
}

// fromStdin is sysbench without a test name, which runs the Lua script on
// its standard input. An empty script does nothing, as in sysbench; any
// other is refused (benchmatrix oltp runs no Lua); a terminal is not read.
func fromStdin(inv Invocation, stdin io.Reader, stdout, stderr io.Writer, banner func()) int {
	if f, ok := stdin.(*os.File); stdin == nil || ok && isTerminal(f) {
		fmt.Fprintf(stderr, "benchmatrix oltp: no workload given (sysbench would read a Lua script from standard input)\n")
		writeUsage(stderr)
		return ExitUsage
	}
	script, err := io.ReadAll(io.LimitReader(stdin, 1<<20))
	banner()
	if err != nil {
		fmt.Fprintf(stdout, "FATAL: reading the script from standard input: %v\n", err)
		return ExitFailure
	}
	if strings.TrimSpace(string(script)) == "" {
		return ExitOK
	}
	fmt.Fprintf(stdout, "FATAL: benchmatrix oltp does not run Lua scripts (one was given on standard input); it runs sysbench's bundled OLTP workloads: %s\n",
		strings.Join(Workloads(), ", "))
	return ExitFailure
}

// isTerminal asks the terminal driver, not the file's mode: /dev/null is a
// character device too, and bash 5.2 gives an empty here-document as
// /dev/null (sysbench's cmdline.t: `sysbench --unknown <<EOF`), which
// sysbench reads as an empty script.
func isTerminal(f *os.File) bool { return isatty.IsTerminal(f.Fd()) }

// execution is one command being carried out.
type execution struct {
	ctx            context.Context
	inv            Invocation
	eng            engineFuncs
	stdout, stderr *lockedWriter
}

func (x *execution) json() bool { return x.inv.Format == "json" }

// notice is where sysbench's LOG_NOTICE output goes: stdout in text mode at
// --verbosity >= 3, nowhere otherwise.
func (x *execution) notice() io.Writer {
	if x.json() || x.inv.Verbosity < 3 {
		return io.Discard
	}
	return x.stdout
}

// progress is where the engine's progress lines go: the messages
// sysbench's scripts print with Lua's print, which --verbosity does not
// silence.
func (x *execution) progress() io.Writer {
	if x.json() {
		return x.stderr
	}
	return x.stdout
}

func (x *execution) do() int {
	inv := x.inv
	if inv.Command == "help" {
		WriteBanner(x.notice())
		if w, _ := Spec(inv.Workload); w.noHelp || inv.Legacy != nil {
			// sysbench.c writes it to stderr.
			fmt.Fprintf(x.stderr, "'%s' test does not implement the 'help' command.\n", inv.TestName)
			return ExitFailure
		}
		// sysbench's text byte for byte, on stdout and stderr alike
		// (sysbench's script_oltp_help.t reads both): benchmatrix's own
		// options come only when asked for, after it.
		writeHelp(x.stdout, inv.TestName, inv.Workload, DefaultOptions())
		if inv.Extras {
			WriteOwnHelp(x.stdout, inv.Workload, DefaultOptions())
		}
		return ExitOK
	}
	WriteBanner(x.notice())
	if inv.Command == "run" {
		return x.run()
	}
	var err error
	switch inv.Command {
	case "prepare":
		o := inv.Options
		if inv.Legacy != nil {
			// The legacy scripts' prepare() runs in sysbench's main
			// thread: one connection, table after table, whatever
			// --num-threads says (and so the same lines in the same order).
			o.Threads = 1
		} else {
			x.workerThreads()
		}
		err = x.eng.prepare(x.ctx, inv.Config, o, x.progress())
	case "prewarm":
		x.workerThreads()
		err = x.eng.prewarm(x.ctx, inv.Config, inv.Options, x.progress())
	case "cleanup":
		err = x.eng.cleanup(x.ctx, inv.Config, inv.Options, x.progress())
	}
	code, msg := x.outcome(err)
	if x.json() {
		doc := x.document(nil, nil, nil, code == ExitInterrupted, msg)
		if werr := WriteJSON(x.stdout, doc); werr != nil {
			fmt.Fprintf(x.stderr, "benchmatrix oltp: %v\n", werr)
		}
	}
	return code
}

// workerThreads prints what sysbench prints before a parallel command
// (prepare, prewarm): nothing at --threads=1, which sysbench runs in its
// main thread.
func (x *execution) workerThreads() {
	if x.inv.Options.Threads > 1 {
		fmt.Fprintf(x.notice(), "Initializing worker threads...\n\n")
	}
}

// run carries out the run command: header, an interval line per report,
// then the histogram, summary and extras (or one JSON document).
func (x *execution) run() int {
	o := x.inv.Options
	WriteRunHeader(x.notice(), o)
	var (
		mu          sync.Mutex
		closed      bool
		intervals   []Interval
		checkpoints []Interval
	)
	report := func(iv Interval) {
		mu.Lock()
		defer mu.Unlock()
		if closed {
			return
		}
		if iv.Phase == engine.PhaseCheckpoint {
			if x.json() {
				checkpoints = append(checkpoints, iv)
			} else {
				WriteCheckpoint(x.notice(), iv.End-o.Warmup, iv.Checkpoint)
			}
			return
		}
		if x.json() {
			intervals = append(intervals, iv)
			return
		}
		w := x.notice()
		fmt.Fprintln(w, FormatInterval(iv, o.Percentile))
		if o.Rate > 0 {
			fmt.Fprintln(w, FormatQueue(iv))
		}
	}
	o.print = x.progress() // the legacy scripts' Lua print (workload_legacy_parallel_prepare.go)
	res, err := x.eng.run(x.ctx, x.inv.Config, o, report)
	if err == nil && x.ctx.Err() != nil {
		err = x.ctx.Err() // stopped by the interrupt, even if the engine says nothing
	}
	mu.Lock()
	closed = true
	mu.Unlock()

	if err == nil && res == nil {
		err = errors.New("the engine returned no result")
	}
	code, msg := x.outcome(err)
	if code == ExitFailure {
		res = nil // sysbench prints no report after a FATAL error
	}
	forced := code == ExitOK && res != nil && res.ForcedShutdown
	if forced {
		code, msg = ExitForcedShutdown, forcedShutdownMsg
		if x.json() {
			fmt.Fprintf(x.stderr, "FATAL: %s\n", msg)
		} else {
			fmt.Fprintf(x.stdout, "FATAL: %s\n", msg)
		}
	}
	if res != nil && res.Options.Threads == 0 {
		r := *res // the engine left Options empty: use the ones it ran with
		r.Options = o
		res = &r
	}
	if x.json() {
		if werr := WriteJSON(x.stdout, x.document(intervals, checkpoints, res, code == ExitInterrupted, msg)); werr != nil {
			fmt.Fprintf(x.stderr, "benchmatrix oltp: %v\n", werr)
		}
		return code
	}
	if res != nil {
		w := x.notice()
		if res.Options.Histogram && !res.ForcedShutdown {
			WriteHistogram(w, res.Histogram)
		}
		WriteSummary(w, res)
		if x.inv.Extras {
			WriteExtras(w, res)
		}
	}
	return code
}

// outcome maps the engine's error to an exit code, printing FATAL (text
// mode, stdout, as sysbench does; JSON mode, stderr) or the interruption
// notice. msg is the scrubbed error text for the JSON document.
func (x *execution) outcome(err error) (code int, msg string) {
	if err == nil {
		return ExitOK, ""
	}
	msg = redactPassword(err.Error(), x.inv.Conn.Password)
	if x.ctx.Err() == nil {
		if text, ok := sysbenchSQLError(err, x.inv.Workload); ok {
			msg = redactPassword(text, x.inv.Conn.Password)
		}
	}
	if x.ctx.Err() != nil {
		fmt.Fprintf(x.stderr, "benchmatrix oltp: interrupted (%s)\n", msg)
		return ExitInterrupted, msg
	}
	if x.json() {
		fmt.Fprintf(x.stderr, "FATAL: %s\n", msg)
	} else {
		fmt.Fprintf(x.stdout, "FATAL: %s\n", msg)
	}
	return ExitFailure, msg
}

func (x *execution) document(intervals, checkpoints []Interval, res *Result, interrupted bool, msg string) *JSONReport {
	doc := &JSONReport{
		Benchmatrix: version.Version,
		Sysbench:    SysbenchVersion,
		Workload:    x.inv.Workload,
		Command:     x.inv.Command,
		Options:     OptionsMap(x.inv.Options),
		Intervals:   []JSONInterval{},
		Result:      NewJSONResult(res),
		Interrupted: interrupted,
		Error:       msg,
	}
	if c := x.inv.Config; c != nil {
		doc.Connection = JSONConnection{Net: c.Net, Address: c.Addr, User: c.User, DB: c.DBName}
	}
	for _, iv := range intervals {
		doc.Intervals = append(doc.Intervals, NewJSONInterval(iv, x.inv.Options.Percentile))
	}
	for _, cp := range checkpoints {
		doc.Checkpoints = append(doc.Checkpoints, JSONCheckpoint{At: (cp.End - x.inv.Options.Warmup).Seconds(), Result: NewJSONResult(cp.Checkpoint)})
	}
	return doc
}

// sysbenchSQLError is the text of a FATAL server error as sysbench prints
// it (drv_mysql.c and sysbench.c; parsers and people grep for it), after
// "FATAL: ": the statement with the driver call that failed (a prepared
// statement's execution, with its placeholders, or a text query, as sent),
// then the worker's failure with the SQL state:
//
//	mysql_drv_query() returned error 1062 (Duplicate entry '50' for key 'PRIMARY') for query 'INSERT ...'
//	FATAL: `thread_run' function failed: oltp_write_only: worker 2: SQL error, errno = 1062, state = '23000': Duplicate entry ...
//
// (sysbench names its Lua script's line where this names the worker.) ok
// is false for an error that is no server error on a statement.
func sysbenchSQLError(err error, workload string) (text string, ok bool) {
	var se *sqlconn.StatementError
	var me *mysql.MySQLError
	if !errors.As(err, &se) || !errors.As(se.Err, &me) {
		return "", false
	}
	call := "mysql_drv_query"
	if se.Prepared {
		call = "mysql_stmt_execute"
	}
	where := strings.TrimSuffix(strings.TrimSuffix(err.Error(), se.Error()), ": ")
	if where == "" || where == err.Error() {
		where = workload
	}
	state := strings.TrimRight(string(me.SQLState[:]), "\x00")
	return fmt.Sprintf("%s() returned error %d (%s) for query '%s'\nFATAL: `thread_run' function failed: %s: SQL error, errno = %d, state = '%s': %s",
		call, me.Number, me.Message, se.SQL, where, me.Number, state, me.Message), true
}

// redactPassword replaces every occurrence of the password in s. Driver errors do
// not carry the password, but an engine error might quote a DSN.
func redactPassword(s, password string) string {
	if password == "" {
		return s
	}
	return strings.ReplaceAll(s, password, "***")
}

// lockedWriter serialises writes: the engine's workers log concurrently.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// writeUsage is --help in the layout of `sysbench --help` (its header, its
// command line, its sections and descriptions where the option is the
// same), with DefaultOptions' defaults, benchmatrix's own options in a
// section of their own, and the workloads in place of sysbench's
// compiled-in tests.
func writeUsage(w io.Writer) {
	d := DefaultOptions()
	c := DefaultConnection()
	fmt.Fprintf(w, "Usage:\n  benchmatrix oltp [options]... [testname] [command]\n\n")
	fmt.Fprintf(w, "Commands implemented by most tests: prepare run cleanup help\n\n")
	section := func(title string, rows [][2]string) {
		fmt.Fprintf(w, "%s:\n", title)
		width := 0
		for _, r := range rows {
			width = max(width, len(r[0]))
		}
		for _, r := range rows {
			fmt.Fprintf(w, "  %-*s %s\n", width, r[0], r[1])
		}
		fmt.Fprintf(w, "\n")
	}
	onOff := func(b bool) string { return map[bool]string{true: "on", false: "off"}[b] }
	section("General options", [][2]string{
		{"--threads=N", fmt.Sprintf("number of threads to use [%d]", d.Threads)},
		{"--events=N", fmt.Sprintf("limit for total number of events [%d]", d.Events)},
		{"--time=N", fmt.Sprintf("limit for total execution time in seconds [%s]", formatNumber(d.Time.Seconds()))},
		{"--forced-shutdown=STRING", "number of seconds to wait after the --time limit before forcing shutdown, or 'off' to disable [off]"},
		{"--thread-stack-size=SIZE", "size of stack per thread (accepted, ignored: Go sizes its stacks) [64K]"},
		{"--rate=N", fmt.Sprintf("average transactions rate. 0 for unlimited rate [%s]", formatNumber(d.Rate))},
		{"--report-interval=N", "periodically report intermediate statistics with a specified interval in seconds. 0 disables intermediate reports [0]"},
		{"--report-checkpoints=[LIST,...]", "dump full statistics and reset all counters at specified points in time. The argument is a list of comma-separated values representing the amount of time in seconds elapsed from start of test when report checkpoint(s) must be performed. Report checkpoints are off by default. []"},
		{"--debug[=on|off]", "print more debugging info (accepted, ignored) [off]"},
		{"--validate[=on|off]", "perform validation checks where possible (accepted, ignored) [off]"},
		{"--help[=on|off]", "print help and exit [off]"},
		{"--version[=on|off]", "print version and exit [off]"},
		{"--config-file=FILENAME", "File containing command line options"},
		{"--tx-rate=N", "deprecated alias for --rate [0]"},
		{"--max-requests=N", "deprecated alias for --events [0]"},
		{"--max-time=N", "deprecated alias for --time [0]"},
		{"--num-threads=N", "deprecated alias for --threads [1]"},
		{"--test=PATH", "deprecated: the test as an option; a 0.5-era script of sysbench's oltp_legacy directory (oltp.lua, select.lua, insert.lua, ...) is read with its --oltp-* options"},
	})
	section("Log options", [][2]string{
		{"--verbosity=N", "verbosity level {5 - debug, 0 - only critical messages} [3]"},
		{"--percentile=N", fmt.Sprintf("percentile to calculate in latency statistics (1-100). Use the special value of 0 to disable percentile calculations [%s]", formatNumber(d.Percentile))},
		{"--histogram[=on|off]", fmt.Sprintf("print latency histogram in report [%s]", onOff(d.Histogram))},
	})
	section("benchmatrix options (not in sysbench)", [][2]string{
		{"--extras[=on|off]", "print p50/p99/p99.9, open-loop and warm-up figures after the report, and list benchmatrix's options after 'WORKLOAD help' [off]"},
		{"--format=STRING", "output format {text, json}; json is one document with everything [text]"},
		{"--warmup-time=N", fmt.Sprintf("run this many seconds first, excluded from the statistics (sysbench master) [%s]", formatNumber(d.Warmup.Seconds()))},
		{"--reinsert-id=STRING", fmt.Sprintf("id of the row re-inserted after each DELETE {same, auto} [%s]", d.ReinsertID)},
		{"--recreate[=on|off]", "let prepare drop and recreate sbtestN tables that already exist [off]"},
	})
	section("Pseudo-Random Numbers Generator options", [][2]string{
		{"--rand-type=STRING", fmt.Sprintf("random numbers distribution {uniform,gaussian,special,pareto,zipfian} [%s]", d.RandType)},
		{"--rand-spec-iter=N", fmt.Sprintf("number of iterations used for numbers generation [%d]", d.RandSpecIter)},
		{"--rand-spec-pct=N", fmt.Sprintf("percentage of values to be treated as 'special' (for special distribution) [%s]", formatNumber(d.RandSpecPct))},
		{"--rand-spec-res=N", fmt.Sprintf("percentage of 'special' values to use (for special distribution) [%s]", formatNumber(d.RandSpecRes))},
		{"--rand-seed=N", fmt.Sprintf("seed for random number generator. When 0, the current time is used as a RNG seed. [%d]", d.RandSeed)},
		{"--rand-pareto-h=N", fmt.Sprintf("parameter h for pareto distribution [%s]", formatNumber(d.RandParetoH))},
		{"--rand-zipfian-exp=N", fmt.Sprintf("shape parameter (exponent) of the zipfian distribution [%s]", formatNumber(d.RandZipfianExp))},
	})
	section("General database options", [][2]string{
		{"--db-driver=STRING", "specifies database driver to use; only mysql is supported [mysql]"},
		{"--db-ps-mode=STRING", fmt.Sprintf("prepared statements usage mode {auto, disable} [%s]", d.PSMode)},
	})
	section("mysql options", [][2]string{
		{"--mysql-host=[LIST,...]", fmt.Sprintf("MySQL server host; only the first is used; localhost is the Unix socket (--mysql-socket, MYSQL_UNIX_PORT, the client configuration's socket, /run/mysqld/mysqld.sock), as for libmysqlclient [%s]", c.Hosts[0])},
		{"--mysql-port=[LIST,...]", fmt.Sprintf("MySQL server port; only the first is used [%d]", c.Ports[0])},
		{"--mysql-socket=[LIST,...]", "MySQL socket; only the first is used"},
		{"--mysql-user=STRING", fmt.Sprintf("MySQL user [%s]", c.User)},
		{"--mysql-password=STRING", "MySQL password []"},
		{"--mysql-db=STRING", fmt.Sprintf("MySQL database name [%s]", c.DB)},
		{"--mysql-ssl=STRING", "use TLS: on (unverified), off, preferred, verify_identity [off]"},
		{"--mysql-compression[=on|off]", "use compression [off]"},
		{"--mysql-ignore-errors=[LIST,...]", fmt.Sprintf("list of errors to ignore, or \"all\" [%s]", strings.Trim(strings.ReplaceAll(fmt.Sprint(d.IgnoreErrors), " ", ","), "[]"))},
	})
	fmt.Fprintf(w, "Compiled-in tests:\n")
	for _, name := range Workloads() {
		fmt.Fprintf(w, "  %s\n", name)
	}
	fmt.Fprintf(w, "\nSee 'benchmatrix oltp <testname> help' for a list of options for each test.\n\n")
}

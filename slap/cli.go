package slap

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/user"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"benchmatrix/mycnf"
	"benchmatrix/version"
)

// Exit codes of mariadb-slap (my_getopt's for option errors).
const (
	exitOK              = 0
	exitFailure         = 1
	exitUnknownOption   = 2
	exitAmbiguousOption = 3
	exitNoArgAllowed    = 4
	exitArgRequired     = 5
	exitUnknownSuffix   = 9
)

type argKind int

const (
	noArg   argKind = iota // a flag (verbose, version, help)
	boolArg                // a flag that also takes =0/1/on/off and --skip-
	reqArg                 // needs a value: --x=v, --x v, -xv, -x v
	optArg                 // may take a value, only as --x=v or -xv
)

type option struct {
	name  string
	short byte
	kind  argKind
	set   func(c *Config, v string, st *cliState) error
}

// cliState is what parsing decides beyond the Config.
type cliState struct {
	help, version bool
	positional    []string
	// inFile is set while the option files' arguments are parsed: a port
	// or socket from my.cnf does not choose the protocol, as one on the
	// command line does (MariaDB 10.6.1 and later).
	inFile bool
}

func str(f func(c *Config) *string) func(*Config, string, *cliState) error {
	return func(c *Config, v string, _ *cliState) error { *f(c) = v; return nil }
}

func flag(f func(c *Config) *bool) func(*Config, string, *cliState) error {
	return func(c *Config, v string, _ *cliState) error { *f(c) = v == "1"; return nil }
}

func num(name string, f func(c *Config) *uint64) func(*Config, string, *cliState) error {
	return func(c *Config, v string, _ *cliState) error {
		n, err := parseNumber(name, v)
		if err != nil {
			return err
		}
		*f(c) = n
		return nil
	}
}

func ignore(c *Config, v string, st *cliState) error { return nil }

// options is mariadb-slap 10.11's option list, sorted by name (unique
// prefixes resolve against it, as my_getopt does).
var options = []option{
	{"auto-generate-sql", 'a', boolArg, flag(func(c *Config) *bool { return &c.AutoGenerate })},
	{"auto-generate-sql-add-autoincrement", 0, boolArg, flag(func(c *Config) *bool { return &c.AddAutoIncrement })},
	{"auto-generate-sql-execute-number", 0, reqArg, num("auto-generate-sql-execute-number", func(c *Config) *uint64 { return &c.ExecuteNumber })},
	{"auto-generate-sql-guid-primary", 0, boolArg, flag(func(c *Config) *bool { return &c.GUIDPrimary })},
	{"auto-generate-sql-load-type", 0, reqArg, str(func(c *Config) *string { return &c.LoadType })},
	{"auto-generate-sql-secondary-indexes", 0, reqArg, num("auto-generate-sql-secondary-indexes", func(c *Config) *uint64 { return &c.SecondaryIndexes })},
	{"auto-generate-sql-unique-query-number", 0, reqArg, num("auto-generate-sql-unique-query-number", func(c *Config) *uint64 { return &c.UniqueQueryNumber })},
	{"auto-generate-sql-unique-write-number", 0, reqArg, num("auto-generate-sql-unique-write-number", func(c *Config) *uint64 { return &c.UniqueWriteNumber })},
	{"auto-generate-sql-write-number", 0, reqArg, num("auto-generate-sql-write-number", func(c *Config) *uint64 { return &c.WriteNumber })},
	{"character-sets-dir", 0, reqArg, ignore},
	{"commit", 0, reqArg, num("commit", func(c *Config) *uint64 { return &c.Commit })},
	{"compress", 'C', boolArg, flag(func(c *Config) *bool { return &c.Compress })},
	{"concurrency", 'c', reqArg, func(c *Config, v string, _ *cliState) error { c.Concurrency = parseComma(v); return nil }},
	{"create", 0, reqArg, str(func(c *Config) *string { return &c.Create })},
	{"create-schema", 0, reqArg, str(func(c *Config) *string { return &c.CreateSchema })},
	{"csv", 0, optArg, func(c *Config, v string, _ *cliState) error {
		if v == "" {
			v = "-"
		}
		c.CSV = v
		return nil
	}},
	{"debug", '#', optArg, ignore},
	{"debug-check", 0, boolArg, ignore},
	{"debug-info", 'T', boolArg, ignore},
	{"default_auth", 0, reqArg, ignore},
	{"delimiter", 'F', reqArg, str(func(c *Config) *string { return &c.Delimiter })},
	{"detach", 0, reqArg, num("detach", func(c *Config) *uint64 { return &c.Detach })},
	{"engine", 'e', reqArg, func(c *Config, v string, _ *cliState) error { c.Engines = parseEngines(v); return nil }},
	{"help", '?', noArg, func(c *Config, v string, st *cliState) error { st.help = true; return nil }},
	{"host", 'h', reqArg, str(func(c *Config) *string { return &c.Host })},
	{"init-command", 0, reqArg, str(func(c *Config) *string { return &c.InitCommand })},
	{"iterations", 'i', reqArg, num("iterations", func(c *Config) *uint64 { return &c.Iterations })},
	{"no-drop", 0, boolArg, flag(func(c *Config) *bool { return &c.NoDrop })},
	{"number-char-cols", 'x', reqArg, func(c *Config, v string, _ *cliState) error { c.CharCols, c.CharColsIndex = parseCols(v); return nil }},
	{"number-int-cols", 'y', reqArg, func(c *Config, v string, _ *cliState) error { c.IntCols, c.IntColsIndex = parseCols(v); return nil }},
	{"number-of-queries", 0, reqArg, num("number-of-queries", func(c *Config) *uint64 { return &c.NumberOfQueries })},
	{"only-print", 0, boolArg, flag(func(c *Config) *bool { return &c.OnlyPrint })},
	{"password", 'p', optArg, func(c *Config, v string, _ *cliState) error {
		c.Password, c.PasswordPrompt = v, false
		return nil
	}},
	{"plugin_dir", 0, reqArg, ignore},
	{"port", 'P', reqArg, func(c *Config, v string, st *cliState) error {
		n, err := parseNumber("port", v)
		if err != nil {
			return err
		}
		c.Port = n
		if !st.inFile {
			c.Protocol = "tcp" // a port on the command line means TCP
		}
		return nil
	}},
	{"post-query", 0, reqArg, str(func(c *Config) *string { return &c.PostQuery })},
	{"post-system", 0, reqArg, str(func(c *Config) *string { return &c.PostSystem })},
	{"pre-query", 0, reqArg, str(func(c *Config) *string { return &c.PreQuery })},
	{"pre-system", 0, reqArg, str(func(c *Config) *string { return &c.PreSystem })},
	{"protocol", 0, reqArg, func(c *Config, v string, _ *cliState) error {
		switch p := strings.ToLower(v); p {
		case "tcp", "socket":
			c.Protocol = p
			return nil
		}
		return message("Unknown option to protocol: " + v + "\nAlternatives are: 'TCP','SOCKET','PIPE','MEMORY'")
	}},
	{"query", 'q', reqArg, str(func(c *Config) *string { return &c.Query })},
	{"silent", 's', boolArg, flag(func(c *Config) *bool { return &c.Silent })},
	{"socket", 'S', reqArg, func(c *Config, v string, st *cliState) error {
		c.Socket = v
		if !st.inFile {
			c.Protocol = "socket" // a socket on the command line means the socket
		}
		return nil
	}},
	{"user", 'u', reqArg, str(func(c *Config) *string { return &c.User })},
	{"verbose", 'v', noArg, func(c *Config, v string, _ *cliState) error { c.Verbose++; return nil }},
	{"version", 'V', noArg, func(c *Config, v string, st *cliState) error { st.version = true; return nil }},
}

// optionFiles is where the option files are read from (a test's fake
// machine, or the real one).
var optionFiles = mycnf.OS

// defaultsGroups are the option-file groups mariadb-slap 10.11 reads.
var defaultsGroups = []string{"mysqlslap", "mariadb-slap", "client", "client-server", "client-mariadb"}

// errUnknownVariable is my_getopt's exit code for an unknown option with a
// value, as every option from a file has.
const exitUnknownVariable = 7

// UsageError is a command-line problem, with mariadb-slap's exit code.
type UsageError struct {
	Msg  string
	Code int
}

func (e *UsageError) Error() string { return e.Msg }

// ExitCode implements exitcode.Coder.
func (e *UsageError) ExitCode() int { return e.Code }

// Parse reads a mysqlslap command line (without the program name). info
// receives my_getopt's notes (a unique prefix used, a --loose- option
// unknown).
func Parse(args []string, info io.Writer) (Config, error) {
	c := DefaultConfig()
	st := &cliState{}
	// The option files first (mycnf: --no-defaults, --defaults-file and
	// the others count only before any other argument), then the command
	// line, which overrides them.
	src, args := mycnf.TakeSources(args)
	fileArgs, err := optionFiles().Load(src, defaultsGroups...)
	if err != nil {
		return c, &UsageError{Msg: err.Error(), Code: exitFailure}
	}
	if src.Print {
		return c, &helpRequest{defaults: fileArgs}
	}
	st.inFile = true
	if err := parseArgs(&c, st, fileArgs, info); err != nil {
		if ue, ok := err.(*UsageError); ok && ue.Code == exitUnknownOption {
			ue.Code = exitUnknownVariable
			ue.Msg = "unknown variable '" + strings.TrimPrefix(strings.TrimPrefix(ue.Msg, "unknown option '--"), "unknown option '")
		}
		return c, err
	}
	st.inFile = false
	if err := parseArgs(&c, st, args, info); err != nil {
		return c, err
	}
	if st.help || st.version {
		return c, &helpRequest{help: st.help}
	}
	if len(st.positional) > 2 {
		return c, &UsageError{Msg: "Too many arguments", Code: exitFailure}
	}
	if c.CSV != "" || c.OnlyPrint {
		c.Silent = true
	}
	if err := c.Check(); err != nil {
		return c, &UsageError{Msg: err.Error(), Code: exitFailure}
	}
	return c, nil
}

type helpRequest struct {
	help     bool
	defaults []string // --print-defaults: the option files' arguments
}

func (h *helpRequest) Error() string { return "help" }

func lookup(name string, info io.Writer) (*option, *UsageError) {
	norm := strings.ReplaceAll(name, "_", "-")
	var matches []*option
	for i := range options {
		on := strings.ReplaceAll(options[i].name, "_", "-")
		if on == norm {
			return &options[i], nil
		}
		if strings.HasPrefix(on, norm) {
			matches = append(matches, &options[i])
		}
	}
	switch len(matches) {
	case 0:
		return nil, nil
	case 1:
		fmt.Fprintf(info, "Info: Using unique option prefix '%s' is error-prone and can break in the future. Please use the full name '%s' instead.\n", name, matches[0].name)
		return matches[0], nil
	}
	names := make([]string, len(matches))
	for i, m := range matches {
		names[i] = m.name
	}
	sort.Strings(names)
	return nil, &UsageError{Code: exitAmbiguousOption, Msg: fmt.Sprintf("ambiguous option '--%%s' (%s)", strings.Join(names, ", "))}
}

func boolValue(v string) (string, bool) {
	switch strings.ToLower(v) {
	case "1", "on", "true", "yes":
		return "1", true
	case "0", "off", "false", "no":
		return "0", true
	}
	return "", false
}

func parseArgs(c *Config, st *cliState, args []string, info io.Writer) error {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			st.positional = append(st.positional, args[i+1:]...)
			return nil
		case strings.HasPrefix(a, "--"):
			body := a[2:]
			name, val, hasVal := strings.Cut(body, "=")
			if mycnf.IsSource(name) {
				// They count only before every other argument, as in
				// mariadb-slap; later they are unknown.
				if hasVal {
					return &UsageError{Code: exitUnknownVariable, Msg: fmt.Sprintf("unknown variable '%s'", body)}
				}
				return &UsageError{Code: exitUnknownOption, Msg: fmt.Sprintf("unknown option '%s'", a)}
			}
			loose := false
			if strings.HasPrefix(name, "loose-") || strings.HasPrefix(name, "loose_") {
				loose, name = true, name[6:]
			}
			negate, enable := false, false
			opt, uerr := lookup(name, info)
			if opt == nil && uerr == nil {
				for _, p := range []string{"skip-", "disable-", "enable-"} {
					if rest, ok := strings.CutPrefix(strings.ReplaceAll(name, "_", "-"), p); ok {
						if o, e := lookup(rest, info); o != nil && o.kind == boolArg {
							opt, negate, enable = o, p != "enable-", p == "enable-"
						} else if e != nil {
							uerr = e
						}
						break
					}
				}
			}
			if uerr != nil {
				uerr.Msg = fmt.Sprintf(uerr.Msg, body)
				return uerr
			}
			if opt == nil {
				if loose {
					fmt.Fprintf(info, "Warning: benchmatrix slap: unknown option '%s'\n", a)
					continue
				}
				return &UsageError{Code: exitUnknownOption, Msg: fmt.Sprintf("unknown option '%s'", a)}
			}
			switch opt.kind {
			case noArg:
				if hasVal {
					return &UsageError{Code: exitNoArgAllowed, Msg: fmt.Sprintf("option '--%s' cannot take an argument", opt.name)}
				}
			case boolArg:
				v := "1"
				if negate {
					v = "0"
				}
				if hasVal {
					b, ok := boolValue(val)
					if !ok || negate || enable {
						return &UsageError{Code: exitUnknownOption, Msg: fmt.Sprintf("option '--%s' has bad value '%s'", opt.name, val)}
					}
					v = b
				}
				val = v
			case reqArg:
				if !hasVal {
					if i+1 >= len(args) {
						return &UsageError{Code: exitArgRequired, Msg: fmt.Sprintf("option '--%s' requires an argument", opt.name)}
					}
					i++
					val = args[i]
				}
			case optArg:
				if !hasVal && opt.name == "password" {
					c.PasswordPrompt = true
					continue
				}
			}
			if err := opt.set(c, val, st); err != nil {
				return valueError(err, val, opt.name)
			}
		case strings.HasPrefix(a, "-") && len(a) > 1:
			for j := 1; j < len(a); j++ {
				ch := a[j]
				var opt *option
				for k := range options {
					if options[k].short == ch {
						opt = &options[k]
					}
				}
				if opt == nil {
					return &UsageError{Code: exitUnknownOption, Msg: fmt.Sprintf("unknown option '-%c'", ch)}
				}
				val := "1"
				switch opt.kind {
				case reqArg:
					if j+1 < len(a) {
						val = a[j+1:]
					} else if i+1 < len(args) {
						i++
						val = args[i]
					} else {
						return &UsageError{Code: exitArgRequired, Msg: fmt.Sprintf("option '-%c' requires an argument", ch)}
					}
					j = len(a)
				case optArg:
					val = a[j+1:]
					j = len(a)
					if val == "" && opt.name == "password" {
						c.PasswordPrompt = true
						continue
					}
				}
				if err := opt.set(c, val, st); err != nil {
					return valueError(err, val, opt.name)
				}
			}
		default:
			st.positional = append(st.positional, a)
		}
	}
	return nil
}

func valueError(err error, val, name string) error {
	if _, ok := err.(*ValueError); ok {
		return &UsageError{Code: exitUnknownSuffix, Msg: err.Error()}
	}
	return &UsageError{Code: exitFailure, Msg: err.Error()}
}

// Endpoint is where the command line connects, as libmysqlclient reads
// it: localhost (or no host) is the Unix socket unless --protocol=tcp or
// --port says TCP; another host is TCP. MYSQL_UNIX_PORT and MYSQL_TCP_PORT
// are honoured like the C client does.
func (c *Config) Endpoint() *mysql.Config {
	cfg := mysql.NewConfig()
	cfg.User = c.User
	if cfg.User == "" {
		if u, err := user.Current(); err == nil {
			cfg.User = u.Username
		}
	}
	cfg.Passwd = c.Password
	cfg.Timeout = 10 * time.Second
	host := c.Host
	if host == "" {
		host = "localhost"
	}
	port := c.Port
	if env := os.Getenv("MYSQL_TCP_PORT"); env != "" && c.Protocol != "tcp" {
		if n, err := strconv.ParseUint(env, 10, 16); err == nil {
			port = n
		}
	}
	useSocket := c.Protocol == "socket" || (host == "localhost" && c.Protocol != "tcp")
	if useSocket {
		sock := c.Socket
		if sock == "" {
			sock = os.Getenv("MYSQL_UNIX_PORT")
		}
		if sock == "" {
			sock = "/run/mysqld/mysqld.sock"
		}
		cfg.Net, cfg.Addr = "unix", sock
	} else {
		if host == "localhost" {
			host = "127.0.0.1"
		}
		cfg.Net, cfg.Addr = "tcp", net.JoinHostPort(host, strconv.FormatUint(port, 10))
	}
	return cfg
}

// Main is `benchmatrix slap`: it runs a mysqlslap command line and
// returns mariadb-slap's exit status.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	const prog = "benchmatrix slap"
	c, err := Parse(args, stderr)
	if h, ok := err.(*helpRequest); ok && h.defaults != nil {
		fmt.Fprintf(stdout, "%s would have been started with the following arguments:\n", prog)
		for _, a := range h.defaults {
			fmt.Fprintf(stdout, "%s ", maskPassword(a))
		}
		fmt.Fprintln(stdout)
		return exitOK
	}
	if h, ok := err.(*helpRequest); ok {
		fmt.Fprintf(stdout, "%s  Ver 1.0 (mariadb-slap 10.11 command line; benchmatrix %s)\n", prog, version.Version)
		if h.help {
			printHelp(stdout)
		}
		return exitOK
	}
	if err != nil {
		code := exitFailure
		if ue, ok := err.(*UsageError); ok {
			code = ue.Code
		}
		if strings.HasPrefix(err.Error(), "Unknown suffix") {
			lines := strings.SplitN(err.Error(), "\n", 2)
			fmt.Fprintf(stderr, "%s\n%s: %s\n", lines[0], prog, lines[1])
		} else {
			fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		}
		return code
	}
	if c.PasswordPrompt {
		fmt.Fprint(stderr, "Enter password: ")
		line, _ := bufio.NewReader(stdin).ReadString('\n')
		c.Password = strings.TrimRight(line, "\r\n")
	}
	b := &Bench{Config: c, Out: stdout, Err: stderr}
	if c.CSV != "" && c.CSV != "-" {
		f, err := os.OpenFile(c.CSV, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			fmt.Fprintf(stderr, "%s: Could not open csv file: %s\n", prog, c.CSV)
			return exitFailure
		}
		defer f.Close()
		b.CSV = f
	}
	maxClients := 0
	for _, n := range c.Concurrency {
		maxClients = max(maxClients, n)
	}
	b.Dial = DriverDialer{Config: c.Endpoint(), InitCommand: c.InitCommand, Blocking: maxClients > 0 && canBlock(maxClients)}
	if _, err := b.Run(ctx); err != nil {
		if ctx.Err() != nil {
			return 130
		}
		code := exitFailure
		if fe, ok := err.(*FatalError); ok {
			code = fe.Code
		}
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return code
	}
	return exitOK
}

func printHelp(w io.Writer) {
	fmt.Fprintf(w, "Run a query multiple times against the server (mysqlslap / mariadb-slap 10.11 options).\n\n")
	fmt.Fprintf(w, "Usage: benchmatrix slap [OPTIONS]\n\n")
	for _, o := range options {
		short := "   "
		if o.short != 0 {
			short = fmt.Sprintf("-%c,", o.short)
		}
		arg := ""
		switch o.kind {
		case reqArg:
			arg = "=VALUE"
		case optArg:
			arg = "[=VALUE]"
		}
		fmt.Fprintf(w, "  %s --%s%s\n", short, o.name, arg)
	}
	fmt.Fprintf(w, "\nOption files: the [mysqlslap], [mariadb-slap], [client], [client-server] and [client-mariadb]\n"+
		"groups of /etc/my.cnf, /etc/mysql/my.cnf, $MYSQL_HOME/my.cnf and ~/.my.cnf, unless the first\n"+
		"options say otherwise: --no-defaults, --defaults-file=F, --defaults-extra-file=F,\n"+
		"--defaults-group-suffix=S, --print-defaults (passwords printed as *****).\n")
}

// maskPassword hides the value of a password option: --print-defaults
// shows what the files hold, but a password never reaches the screen.
func maskPassword(arg string) string {
	name, _, ok := strings.Cut(strings.TrimPrefix(arg, "--"), "=")
	if ok && strings.Contains(strings.ToLower(name), "password") {
		return "--" + name + "=*****"
	}
	return arg
}

// SecretArgs finds the passwords on a mysqlslap command line (without the
// program name): it returns, for each argument that holds one, the argument
// with the password masked. It reads the arguments as Parse does (unique
// prefixes, --loose-, bundled short options) but errs on the side of
// masking: the word after a bare -p or --password is masked too (it is
// very likely the password meant, though mariadb-slap prompts for one), and
// an argument the parser would refuse is scanned all the same.
func SecretArgs(args []string) map[int]string {
	const mask = "*****"
	found := map[int]string{}
	bare := func(i int) {
		if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") && args[i+1] != "" {
			found[i+1] = mask
		}
	}
	for i, a := range args {
		switch {
		case a == "--":
			return found
		case strings.HasPrefix(a, "--"):
			name, val, hasVal := strings.Cut(a[2:], "=")
			norm := strings.ReplaceAll(strings.ToLower(name), "_", "-")
			norm = strings.TrimPrefix(norm, "loose-")
			if len(norm) < 2 || !strings.HasPrefix("password", norm) {
				continue
			}
			if !hasVal {
				bare(i)
			} else if val != "" {
				found[i] = "--" + name + "=" + mask
			}
		case strings.HasPrefix(a, "-") && len(a) > 1:
			for j := 1; j < len(a); j++ {
				var opt *option
				for k := range options {
					if options[k].short == a[j] {
						opt = &options[k]
					}
				}
				if opt == nil || opt.kind == noArg || opt.kind == boolArg {
					continue
				}
				if opt.name == "password" {
					if j+1 == len(a) {
						bare(i)
					} else {
						found[i] = a[:j+1] + mask
					}
				}
				break // the rest of the argument is this option's value
			}
		}
	}
	return found
}

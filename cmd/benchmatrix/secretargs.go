package main

// Passwords on the command line (slap -pSECRET, oltp --mysql-password=...,
// run --dsn user:SECRET@...) are readable by every user in /proc/PID/cmdline
// for as long as the process runs. The MariaDB clients overwrite them in
// their argv; a Go program cannot safely write to its argv, so benchmatrix
// starts itself again at once (execve of /proc/self/exe: the same PID) with
// each password masked, and hands the original arguments to the new image
// through an inherited pipe, which only its own user (and root) could open
// and which is empty once read. The password is visible only for the
// moment between the first exec and the second.

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"

	"benchmatrix/oltp"
	"benchmatrix/slap"
)

// argvFDEnv names the descriptor of the pipe a re-executed benchmatrix reads
// its hidden arguments from. It is benchmatrix's own, set only for the
// re-exec and removed from the environment as soon as it is read.
const argvFDEnv = "BENCHMATRIX_HIDDEN_ARGV_FD"

// maxHidden is what the pipe buffers without a reader (Linux gives a pipe
// 64 KiB): a larger payload would block the writer before the exec.
const maxHidden = 60 << 10

// secretArgs finds the passwords in benchmatrix's arguments (without the
// program name): each argument that holds one, masked, by its index.
func secretArgs(args []string) map[int]string {
	if len(args) == 0 {
		return nil
	}
	shift := func(m map[int]string) map[int]string {
		out := make(map[int]string, len(m))
		for i, v := range m {
			out[i+1] = v
		}
		return out
	}
	switch args[0] {
	case "slap":
		return shift(slap.SecretArgs(args[1:]))
	case "oltp":
		return shift(oltp.SecretArgs(args[1:]))
	case "run", "plan", "history":
		// --dsn user:pw@...; --history mysql://user:pw@... (refused,
		// but only after the arguments are parsed).
		found := map[int]string{}
		for i := 1; i < len(args); i++ {
			name, val, hasVal := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
			if !strings.HasPrefix(args[i], "-") || (name != "dsn" && name != "history") {
				continue
			}
			if hasVal {
				if m, ok := maskDSN(val); ok {
					found[i] = args[i][:len(args[i])-len(val)] + m
				}
			} else if i+1 < len(args) {
				if m, ok := maskDSN(args[i+1]); ok {
					found[i+1] = m
				}
			}
		}
		return found
	case "restore":
		if len(args) == 2 {
			if m, ok := maskDSN(args[1]); ok {
				return map[int]string{1: m}
			}
		}
	}
	return nil
}

// maskDSN masks the password of a user:password@... DSN, as the MySQL
// driver reads it (the last @ before the last /, the first : before it).
func maskDSN(dsn string) (string, bool) {
	if scheme, rest, ok := strings.Cut(dsn, "://"); ok { // a URL: mysql://user:pw@host/db
		m, ok := maskDSN(rest)
		return scheme + "://" + m, ok
	}
	end := len(dsn)
	if slash := strings.LastIndex(dsn, "/"); slash >= 0 {
		end = slash
	}
	at := strings.LastIndex(dsn[:end], "@")
	if at < 0 {
		return "", false
	}
	colon := strings.Index(dsn[:at], ":")
	if colon < 0 || colon+1 == at {
		return "", false
	}
	return dsn[:colon+1] + "*****" + dsn[at:], true
}

// hideSecretArgs is called first thing in main with os.Args. When the
// arguments hold a password and this process was not re-executed yet, it
// re-executes benchmatrix with the passwords masked and does not return
// (unless the exec fails: then it says so on stderr and carries on with the
// arguments as they are). In the re-executed process it returns the
// original arguments.
func hideSecretArgs(argv []string, stderr io.Writer) ([]string, error) {
	if fd, ok := os.LookupEnv(argvFDEnv); ok {
		os.Unsetenv(argvFDEnv) // nothing started from here inherits it
		return readHiddenArgs(argv, fd)
	}
	found := secretArgs(argv[1:])
	if len(found) == 0 {
		return argv, nil
	}
	hidden := make(map[int]string, len(found))
	masked := append([]string(nil), argv...)
	for i, m := range found {
		hidden[i+1], masked[i+1] = argv[i+1], m
	}
	err := reexecMasked(masked, hidden) // returns only when the exec failed
	fmt.Fprintf(stderr, "benchmatrix: warning: the password stays readable in /proc/%d/cmdline: %v\n", os.Getpid(), err)
	return argv, nil
}

// reexecMasked execs /proc/self/exe with argv, the arguments in hidden
// waiting in a pipe the new image inherits. It returns only on failure,
// with the reason.
func reexecMasked(argv []string, hidden map[int]string) error {
	payload, err := json.Marshal(hidden)
	if err != nil {
		return err
	}
	if len(payload) > maxHidden {
		return fmt.Errorf("arguments too long to hand over (%d bytes)", len(payload))
	}
	var p [2]int
	if err := syscall.Pipe2(p[:], 0); err != nil {
		return fmt.Errorf("pipe: %w", err)
	}
	syscall.CloseOnExec(p[1])
	_, werr := syscall.Write(p[1], payload)
	syscall.Close(p[1])
	if werr != nil {
		syscall.Close(p[0])
		return fmt.Errorf("write to the pipe: %w", werr)
	}
	env := append(os.Environ(), argvFDEnv+"="+strconv.Itoa(p[0]))
	err = syscall.Exec("/proc/self/exe", argv, env)
	syscall.Close(p[0])
	return fmt.Errorf("re-exec: %w", err)
}

// readHiddenArgs puts the arguments read from the pipe fd back into argv.
func readHiddenArgs(argv []string, fd string) ([]string, error) {
	n, err := strconv.Atoi(fd)
	if err != nil || n < 3 {
		return nil, fmt.Errorf("benchmatrix: $%s=%q is not a descriptor benchmatrix passed itself", argvFDEnv, fd)
	}
	syscall.CloseOnExec(n)
	f := os.NewFile(uintptr(n), "hidden arguments")
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxHidden+1))
	if err != nil {
		return nil, fmt.Errorf("benchmatrix: read the hidden arguments: %w", err)
	}
	var hidden map[int]string
	if err := json.Unmarshal(b, &hidden); err != nil {
		return nil, fmt.Errorf("benchmatrix: $%s: not benchmatrix's hidden arguments", argvFDEnv)
	}
	out := append([]string(nil), argv...)
	for i, a := range hidden {
		if i <= 0 || i >= len(out) {
			return nil, fmt.Errorf("benchmatrix: $%s: argument %d out of range", argvFDEnv, i)
		}
		out[i] = a
	}
	return out, nil
}

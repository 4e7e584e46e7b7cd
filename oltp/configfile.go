package oltp

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"
)

// sysbench 1.0.20's --config-file: a file of "name=value" lines (names
// without the dashes, as in "threads=8" or "mysql-host=db1"), read where
// the option stands on the command line, so that later options override
// it. A value is a comma-separated list whose items may be quoted with '
// or "; '#' starts a comment after the '='; lines without '=' are ignored.
// A file that cannot be opened is reported (on stderr, as sysbench's
// perror) and skipped, as sysbench does.

// expandConfigFiles replaces each --config-file=FILE in args by the options
// the file holds, in place. Files are not read recursively: a
// --config-file line inside a file is kept as an option and refused.
func expandConfigFiles(args []string) (out []string, notices []Notice, err error) {
	for _, arg := range args {
		name, value, ok := strings.Cut(strings.TrimPrefix(arg, "--"), "=")
		if !strings.HasPrefix(arg, "--") || strings.ReplaceAll(strings.ToLower(name), "-", "_") != "config_file" {
			out = append(out, arg)
			continue
		}
		if !ok || value == "" {
			continue // sysbench: an empty value sets nothing
		}
		data, rerr := os.ReadFile(value)
		if rerr != nil {
			notices = append(notices, Notice{ToStderr: true, Text: value + ": " + osErrorText(rerr)})
			continue
		}
		opts, perr := parseConfigFile(data)
		if perr != nil {
			return nil, nil, &UsageError{Kind: KindFatal, Option: "--config-file", Msg: value + ": " + perr.Error()}
		}
		out = append(out, opts...)
	}
	return out, notices, nil
}

// parseConfigFile turns the file's lines into "--name=value" arguments.
func parseConfigFile(data []byte) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		name, rest, ok := strings.Cut(sc.Text(), "=")
		if !ok {
			continue
		}
		name = strings.TrimSpace(name)
		values, err := configValues(rest)
		if err != nil {
			return nil, fmt.Errorf("%v on line %d", err, n)
		}
		if len(values) == 0 {
			out = append(out, "--"+name)
			continue
		}
		out = append(out, "--"+name+"="+strings.Join(values, ","))
	}
	return out, sc.Err()
}

// configValues splits a value list as sysbench's read_config does.
func configValues(s string) ([]string, error) {
	var vals []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f':
			i++
		case c == '#':
			return vals, nil
		case c == '\'' || c == '"':
			end := strings.IndexByte(s[i+1:], c)
			if end < 0 {
				return nil, errors.New("unexpected EOL")
			}
			vals = append(vals, s[i+1:i+1+end])
			i += end + 2
			for i < len(s) && s[i] != ',' {
				i++
			}
			if i < len(s) {
				i++
			}
		default:
			j := i
			for j < len(s) && s[j] != ',' && !strings.ContainsRune(" \t\r\n\v\f", rune(s[j])) {
				j++
			}
			vals = append(vals, s[i:j])
			i = j
			if i < len(s) && s[i] == ',' {
				i++
			}
		}
	}
	return vals, nil
}

// osErrorText is the C library's text for err, as perror prints it ("No
// such file or directory").
func osErrorText(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		s := errno.Error()
		return strings.ToUpper(s[:1]) + s[1:]
	}
	if errors.Is(err, fs.ErrNotExist) {
		return "No such file or directory"
	}
	return err.Error()
}

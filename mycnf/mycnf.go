// Package mycnf reads MySQL and MariaDB option files (my.cnf) as their
// client programs do: groups, !include and !includedir, quoted values and
// escapes, comments, the default file list and the --no-defaults,
// --defaults-file, --defaults-extra-file and --defaults-group-suffix
// options that change it. It returns the options of the groups asked for
// as command-line arguments, in the order the client would see them.
package mycnf

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Sources says which option files to read: the client's own options that
// must come first on its command line.
type Sources struct {
	NoDefaults   bool   // --no-defaults: read none
	DefaultsFile string // --defaults-file: read only this one (required to exist)
	ExtraFile    string // --defaults-extra-file: read after the global files (required to exist)
	GroupSuffix  string // --defaults-group-suffix: also read GROUP+suffix
	Print        bool   // --print-defaults
}

// IsSource reports whether name (without the dashes) is one of the
// options that choose the option files.
func IsSource(name string) bool {
	switch strings.ReplaceAll(name, "_", "-") {
	case "no-defaults", "defaults-file", "defaults-extra-file", "defaults-group-suffix", "print-defaults":
		return true
	}
	return false
}

// TakeSources removes the leading option-file options from args, as the
// client library does (they count only before any other argument), and
// returns them with the remaining arguments.
func TakeSources(args []string) (Sources, []string) {
	var s Sources
	for len(args) > 0 {
		name, value, _ := strings.Cut(strings.TrimPrefix(args[0], "--"), "=")
		if !strings.HasPrefix(args[0], "--") {
			break
		}
		switch strings.ReplaceAll(name, "_", "-") {
		case "no-defaults":
			s.NoDefaults = true
		case "defaults-file":
			s.DefaultsFile = value
		case "defaults-extra-file":
			s.ExtraFile = value
		case "defaults-group-suffix":
			s.GroupSuffix = value
		case "print-defaults":
			s.Print = true
		default:
			return s, args
		}
		args = args[1:]
	}
	return s, args
}

// FS is what reading needs from the machine; OS is the real one.
type FS struct {
	ReadFile func(string) ([]byte, error)
	Glob     func(string) ([]string, error)
	Home     string
	Getenv   func(string) string
}

// OS reads the real files.
func OS() FS {
	home, _ := os.UserHomeDir()
	return FS{ReadFile: os.ReadFile, Glob: filepath.Glob, Home: home, Getenv: os.Getenv}
}

// Files is the list a MariaDB client reads on Unix, in order, for s:
// /etc/my.cnf, /etc/mysql/my.cnf, $MYSQL_HOME/my.cnf, the extra file,
// ~/.my.cnf; or only the defaults file; or none.
func (f FS) Files(s Sources) []string {
	switch {
	case s.NoDefaults:
		return nil
	case s.DefaultsFile != "":
		return []string{s.DefaultsFile}
	}
	files := []string{"/etc/my.cnf", "/etc/mysql/my.cnf"}
	if f.Getenv != nil {
		if h := f.Getenv("MYSQL_HOME"); h != "" {
			files = append(files, filepath.Join(h, "my.cnf"))
		}
	}
	if s.ExtraFile != "" {
		files = append(files, s.ExtraFile)
	}
	if f.Home != "" {
		files = append(files, filepath.Join(f.Home, ".my.cnf"))
	}
	return files
}

// formatError is a file the client library refuses to read.
type formatError struct{ msg string }

func (e *formatError) Error() string { return e.msg }

// ErrRequired is returned when --defaults-file or --defaults-extra-file
// names a file that cannot be read; the message is the client library's.
type ErrRequired struct{ Path string }

func (e *ErrRequired) Error() string {
	return "Could not open required defaults file: " + e.Path + "\nFatal error in defaults handling. Program aborted"
}

// Load returns the "--name[=value]" arguments of the given groups (and
// their suffixed twins) from the files s selects, in file and line order.
func (f FS) Load(s Sources, groups ...string) ([]string, error) {
	want := map[string]bool{}
	for _, g := range groups {
		want[g] = true
		if s.GroupSuffix != "" {
			want[g+s.GroupSuffix] = true
		}
	}
	var out []string
	for _, path := range f.Files(s) {
		required := path == s.DefaultsFile || path == s.ExtraFile
		args, err := f.read(path, want, 0, map[string]bool{})
		var fe *formatError
		switch {
		case errors.As(err, &fe):
			return nil, err
		case err != nil && required:
			return nil, &ErrRequired{Path: path}
		case err != nil:
			continue // a global file that cannot be read is skipped
		}
		out = append(out, args...)
	}
	return out, nil
}

func (f FS) read(path string, want map[string]bool, depth int, seen map[string]bool) ([]string, error) {
	if depth > 10 || seen[path] {
		return nil, nil
	}
	seen[path] = true
	data, err := f.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []string
	group := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
		case strings.HasPrefix(line, "!includedir"):
			dir := strings.TrimSpace(strings.TrimPrefix(line, "!includedir"))
			files, _ := f.Glob(filepath.Join(dir, "*.cnf"))
			sort.Strings(files)
			for _, inc := range files {
				args, err := f.read(inc, want, depth+1, seen)
				if errors.As(err, new(*formatError)) {
					return nil, err
				}
				out = append(out, args...)
			}
		case strings.HasPrefix(line, "!include"):
			args, err := f.read(strings.TrimSpace(strings.TrimPrefix(line, "!include")), want, depth+1, seen)
			if errors.As(err, new(*formatError)) {
				return nil, err
			}
			out = append(out, args...)
		case line[0] == '[':
			end := strings.IndexByte(line, ']')
			if end < 0 {
				return nil, &formatError{fmt.Sprintf("wrong group definition in config file %s at line %d", path, n)}
			}
			group = strings.ToLower(strings.TrimSpace(line[1:end]))
		case want[group]:
			key, value, hasValue := strings.Cut(line, "=")
			key = strings.TrimSpace(key)
			if !hasValue {
				out = append(out, "--"+key)
				continue
			}
			out = append(out, "--"+key+"="+parseValue(value))
		}
	}
	return out, sc.Err()
}

// parseValue reads a value: surrounding blanks dropped, a '#' after a
// blank starts a comment, one pair of matching quotes removed, and the
// escapes \b \t \n \r \\ \s (a space) \" \' applied.
func parseValue(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 0 && (s[0] == '"' || s[0] == '\'') {
		q := s[0]
		end := -1
		for i := 1; i < len(s); i++ {
			if s[i] == '\\' {
				i++
				continue
			}
			if s[i] == q {
				end = i
				break
			}
		}
		if end < 0 {
			return unescape(s) // no closing quote: the value as written
		}
		return unescape(s[1:end])
	}
	for i := 1; i < len(s); i++ {
		if s[i] == '#' && (s[i-1] == ' ' || s[i-1] == '\t') {
			s = strings.TrimSpace(s[:i])
			break
		}
	}
	return unescape(s)
}

func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case 'b':
			b.WriteByte('\b')
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 's':
			b.WriteByte(' ')
		case '\\', '"', '\'':
			b.WriteByte(s[i])
		default:
			b.WriteByte('\\')
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

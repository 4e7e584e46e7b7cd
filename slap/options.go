// Package slap is benchmatrix's mysqlslap: it takes mysqlslap /
// mariadb-slap 10.11 command lines verbatim, generates the same SQL as
// mariadb-slap (the same statements, in the same order, from the same
// unseeded C random() sequence), runs it with the same client loop
// (--concurrency lists, --iterations, --number-of-queries, --commit,
// --detach, --pre/--post-query) and prints mariadb-slap's report and CSV
// lines. The runner drives the same loop as a manifest workload.
package slap

import (
	"fmt"
	"strconv"
	"strings"
)

// Engine is one entry of --engine: a storage engine and, after a colon,
// table options (memory:max_rows=2300).
type Engine struct {
	Name   string `json:"name"`
	Option string `json:"option,omitempty"`
}

// Config is a mysqlslap command line: every option mariadb-slap 10.11
// reads, with its defaults (DefaultConfig).
type Config struct {
	AutoGenerate      bool     `json:"auto_generate_sql"`
	LoadType          string   `json:"load_type"` // as given; mixed unless it starts with r, k, w or u
	AddAutoIncrement  bool     `json:"auto_generate_sql_add_autoincrement,omitempty"`
	GUIDPrimary       bool     `json:"auto_generate_sql_guid_primary,omitempty"`
	ExecuteNumber     uint64   `json:"auto_generate_sql_execute_number,omitempty"`
	SecondaryIndexes  uint64   `json:"auto_generate_sql_secondary_indexes,omitempty"`
	UniqueQueryNumber uint64   `json:"auto_generate_sql_unique_query_number"`
	UniqueWriteNumber uint64   `json:"auto_generate_sql_unique_write_number"`
	WriteNumber       uint64   `json:"auto_generate_sql_write_number"`
	IntCols           int      `json:"number_int_cols"`
	IntColsIndex      int      `json:"number_int_cols_index,omitempty"`
	CharCols          int      `json:"number_char_cols"`
	CharColsIndex     int      `json:"number_char_cols_index,omitempty"`
	Engines           []Engine `json:"engine,omitempty"`
	Concurrency       []int    `json:"concurrency"`
	Iterations        uint64   `json:"iterations"`
	NumberOfQueries   uint64   `json:"number_of_queries,omitempty"`
	Commit            uint64   `json:"commit,omitempty"`
	Detach            uint64   `json:"detach,omitempty"`
	Query             string   `json:"query,omitempty"`  // SQL, or a file holding it
	Create            string   `json:"create,omitempty"` // SQL, or a file holding it
	PreQuery          string   `json:"pre_query,omitempty"`
	PostQuery         string   `json:"post_query,omitempty"`
	PreSystem         string   `json:"pre_system,omitempty"`
	PostSystem        string   `json:"post_system,omitempty"`
	Delimiter         string   `json:"delimiter"`
	CreateSchema      string   `json:"create_schema"`
	NoDrop            bool     `json:"no_drop,omitempty"`
	CSV               string   `json:"csv,omitempty"` // "-" is stdout
	OnlyPrint         bool     `json:"only_print,omitempty"`
	Silent            bool     `json:"silent,omitempty"`
	Verbose           int      `json:"verbose,omitempty"`

	// Connection. The password is never printed, logged or stored.
	Host           string `json:"host,omitempty"`
	Port           uint64 `json:"port,omitempty"`
	Socket         string `json:"socket,omitempty"`
	Protocol       string `json:"protocol,omitempty"` // tcp | socket, from --protocol, -P or -S
	User           string `json:"user,omitempty"`
	Password       string `json:"-"`
	PasswordPrompt bool   `json:"-"` // -p without a value: ask on the terminal
	InitCommand    string `json:"init_command,omitempty"`
	Compress       bool   `json:"compress,omitempty"`
}

// DefaultConfig is mariadb-slap 10.11's defaults.
func DefaultConfig() Config {
	return Config{
		LoadType:          "mixed",
		UniqueQueryNumber: 10,
		UniqueWriteNumber: 10,
		WriteNumber:       100,
		IntCols:           1,
		CharCols:          1,
		Concurrency:       []int{1},
		Iterations:        1,
		Delimiter:         "\n",
		CreateSchema:      "mysqlslap",
		Port:              3306,
	}
}

// Load types, by the first letter mariadb-slap looks at.
const (
	LoadRead   = "read"
	LoadWrite  = "write"
	LoadUpdate = "update"
	LoadKey    = "key"
	LoadMixed  = "mixed"
)

// loadKind is what mariadb-slap makes of --auto-generate-sql-load-type: it
// reads the first letter only, and anything else is mixed.
func (c *Config) loadKind() string {
	if c.LoadType == "" {
		return LoadMixed
	}
	switch c.LoadType[0] {
	case 'r':
		return LoadRead
	case 'k':
		return LoadKey
	case 'w':
		return LoadWrite
	case 'u':
		return LoadUpdate
	}
	return LoadMixed
}

// preserve: the schema is kept (not dropped before each iteration and at
// the end) unless something is created and --no-drop is not given.
func (c *Config) preserve() bool {
	return c.NoDrop || (c.Create == "" && !c.AutoGenerate)
}

// Check is get_options' checks after parsing, with its messages.
func (c *Config) Check() error {
	switch {
	case c.AutoGenerate && (c.Create != "" || c.Query != ""):
		return message("Can't use --auto-generate-sql when create and query strings are specified!")
	case c.AutoGenerate && c.GUIDPrimary && c.AddAutoIncrement:
		return message("Either auto-generate-sql-guid-primary or auto-generate-sql-add-autoincrement can be used!")
	case c.AutoGenerate && c.loadKind() == LoadKey && !c.AddAutoIncrement && !c.GUIDPrimary:
		return message("Can't perform key test without a primary key!")
	case c.AutoGenerate && c.NumberOfQueries > 0 && c.ExecuteNumber > 0:
		return message("Either auto-generate-sql-execute-number or number-of-queries can be used!")
	case c.Iterations == 0:
		// mariadb-slap divides by it (a crash); refused here.
		return fmt.Errorf("--iterations must be at least 1")
	}
	return nil
}

// message is an error worded exactly as mariadb-slap words it (capitals
// and punctuation included: scripts match these texts).
type message string

func (m message) Error() string { return string(m) }

// parseComma is mariadb-slap's --concurrency list: atoi of each field.
func parseComma(s string) []int {
	var out []int
	for _, f := range strings.Split(s, ",") {
		out = append(out, atoi(f))
	}
	return out
}

// parseEngines is --engine: a comma-separated list, each "name" or
// "name:options"; one blank after a comma is skipped.
func parseEngines(s string) []Engine {
	var out []Engine
	for i, f := range strings.Split(s, ",") {
		if i > 0 && f != "" && isSpace(f[0]) {
			f = f[1:]
		}
		if i > 0 && f == "" && i == len(strings.Split(s, ","))-1 {
			break // a trailing comma adds nothing
		}
		e := Engine{Name: f}
		if j := strings.IndexByte(f, ':'); j >= 0 {
			e = Engine{Name: f[:j], Option: f[j+1:]}
		}
		out = append(out, e)
	}
	return out
}

// parseCols is --number-int-cols / --number-char-cols: "N" or "N:I", I
// non-zero asking for an index on each column.
func parseCols(s string) (n, index int) {
	f := s
	if i := strings.IndexByte(f, ','); i >= 0 {
		f = f[:i]
	}
	if i := strings.IndexByte(f, ':'); i >= 0 {
		return atoi(f[:i]), atoi(f[i+1:])
	}
	return atoi(f), 0
}

// atoi is C's: leading blanks, a sign, digits; anything else ends it.
func atoi(s string) int {
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	n := 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		n = n*10 + int(s[i]-'0')
		if n > 1<<31 {
			n = 1 << 31
		}
	}
	if neg {
		n = -n
	}
	return n
}

func isSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\v' || b == '\f' || b == '\r'
}

// parseNumber is my_getopt's number: digits with an optional K, M, G, T, P
// or E suffix (powers of 1024).
func parseNumber(name, v string) (uint64, error) {
	s := strings.TrimSpace(v)
	mult := uint64(1)
	if s != "" {
		switch last := s[len(s)-1]; last {
		case 'k', 'K', 'm', 'M', 'g', 'G', 't', 'T', 'p', 'P', 'e', 'E':
			mult = 1 << (10 * uint(strings.IndexByte("KMGTPE", byte(strings.ToUpper(string(last))[0]))+1))
			s = s[:len(s)-1]
		}
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		bad := v
		for i := 0; i < len(v); i++ {
			if v[i] < '0' || v[i] > '9' {
				bad = v[i : i+1]
				break
			}
		}
		return 0, &ValueError{Name: name, Value: v, Suffix: bad}
	}
	return n * mult, nil
}

// ValueError is a value my_getopt cannot read as a number.
type ValueError struct{ Name, Value, Suffix string }

func (e *ValueError) Error() string {
	return fmt.Sprintf("Unknown suffix '%s' used for variable '%s' (value '%s'). Legal suffix characters are: K, M, G, T, P, E\n"+
		"Error while setting value '%s' to '%s'", e.Suffix, e.Name, e.Value, e.Value, e.Name)
}

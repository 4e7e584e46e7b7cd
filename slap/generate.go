package slap

import (
	"fmt"
	"os"
	"strings"
)

// Kind is what a statement is to mariadb-slap: it decides whether the
// statement takes the engine clause (create), a key (the *Key kinds), and
// how the runner counts it.
type Kind uint8

// Statement kinds, as mariadb-slap types its statements.
const (
	KindOther     Kind = iota // a user statement
	KindSelect                // SELECT ... FROM t1
	KindSelectKey             // SELECT ... FROM t1 WHERE id = (a key follows)
	KindInsert
	KindUpdate
	KindUpdateKey // UPDATE t1 SET ... WHERE id = (a key follows)
	KindCreate    // CREATE TABLE: --engine adds "Engine = ..."
)

// Stmt is one statement of a list.
type Stmt struct {
	SQL  string
	Kind Kind
}

// randString is get_random_string: 126 characters of mariadb-slap's
// alphanumerics (which lack U and V).
func (g *glibcRandom) randString() string {
	const alnum = "0123456789ABCDEFGHIJKLMNOPQRSTWXYZabcdefghijklmnopqrstuvwxyz"
	var b [126]byte
	for i := range b {
		b[i] = alnum[g.Int()%int64(len(alnum))]
	}
	return string(b[:])
}

// tableSQL is build_table_string.
func (c *Config) tableSQL() string {
	var b strings.Builder
	b.WriteString("CREATE TABLE `t1` (")
	cols := c.IntCols > 0 || c.CharCols > 0
	if c.AddAutoIncrement {
		b.WriteString("id serial")
		if cols {
			b.WriteString(",")
		}
	}
	if c.GUIDPrimary {
		// mariadb-slap adds the comma even when no column follows.
		b.WriteString("id varchar(36) primary key,")
	}
	if c.SecondaryIndexes > 0 {
		for i := uint64(0); i < c.SecondaryIndexes; i++ {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, "id%d varchar(36) unique key", i)
		}
		if cols {
			b.WriteString(",")
		}
	}
	for i := 1; i <= c.IntCols; i++ {
		if c.IntColsIndex != 0 {
			fmt.Fprintf(&b, "intcol%d INT(32), INDEX(intcol%d)", i, i)
		} else {
			fmt.Fprintf(&b, "intcol%d INT(32) ", i)
		}
		if i < c.IntCols || c.CharCols > 0 {
			b.WriteString(",")
		}
	}
	for i := 1; i <= c.CharCols; i++ {
		if c.CharColsIndex != 0 {
			fmt.Fprintf(&b, "charcol%d VARCHAR(128), INDEX(charcol%d) ", i, i)
		} else {
			fmt.Fprintf(&b, "charcol%d VARCHAR(128)", i)
		}
		if i < c.CharCols {
			b.WriteString(",")
		}
	}
	b.WriteString(")")
	return b.String()
}

// insertSQL is build_insert_string.
func (c *Config) insertSQL(g *glibcRandom) Stmt {
	var b strings.Builder
	b.WriteString("INSERT INTO t1 VALUES (")
	cols := c.IntCols > 0 || c.CharCols > 0
	if c.AddAutoIncrement {
		b.WriteString("NULL")
		if cols {
			b.WriteString(",")
		}
	}
	if c.GUIDPrimary {
		b.WriteString("uuid()")
		if cols {
			b.WriteString(",")
		}
	}
	if c.SecondaryIndexes > 0 {
		for i := uint64(0); i < c.SecondaryIndexes; i++ {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString("uuid()")
		}
		if cols {
			b.WriteString(",")
		}
	}
	for i := 1; i <= c.IntCols; i++ {
		fmt.Fprintf(&b, "%d", g.Int())
		if i < c.IntCols || c.CharCols > 0 {
			b.WriteString(",")
		}
	}
	for i := 1; i <= c.CharCols; i++ {
		b.WriteString("'" + g.randString() + "'")
		if i < c.CharCols {
			b.WriteString(",")
		}
	}
	b.WriteString(")")
	return Stmt{SQL: b.String(), Kind: KindInsert}
}

// updateSQL is build_update_string.
func (c *Config) updateSQL(g *glibcRandom) Stmt {
	var b strings.Builder
	b.WriteString("UPDATE t1 SET ")
	for i := 1; i <= c.IntCols; i++ {
		fmt.Fprintf(&b, "intcol%d = %d", i, g.Int())
		if i < c.IntCols || c.CharCols > 0 {
			b.WriteString(",")
		}
	}
	for i := 1; i <= c.CharCols; i++ {
		fmt.Fprintf(&b, "charcol%d = '%s'", i, g.randString())
		if i < c.CharCols {
			b.WriteString(",")
		}
	}
	if c.AddAutoIncrement || c.GUIDPrimary {
		b.WriteString(" WHERE id = ")
		return Stmt{SQL: b.String(), Kind: KindUpdateKey}
	}
	return Stmt{SQL: b.String(), Kind: KindUpdate}
}

// selectSQL is build_select_string.
func (c *Config) selectSQL(key bool) Stmt {
	var b strings.Builder
	b.WriteString("SELECT ")
	for i := 1; i <= c.IntCols; i++ {
		fmt.Fprintf(&b, "intcol%d", i)
		if i < c.IntCols || c.CharCols > 0 {
			b.WriteString(",")
		}
	}
	for i := 1; i <= c.CharCols; i++ {
		fmt.Fprintf(&b, "charcol%d", i)
		if i < c.CharCols {
			b.WriteString(",")
		}
	}
	b.WriteString(" FROM t1")
	if key && (c.AddAutoIncrement || c.GUIDPrimary) {
		b.WriteString(" WHERE id = ")
		return Stmt{SQL: b.String(), Kind: KindSelectKey}
	}
	return Stmt{SQL: b.String(), Kind: KindSelect}
}

// Script is what a command line runs: the statements that create the
// schema's tables and data, the statements the clients run, those around
// them, and how many queries a client runs when nothing else says.
type Script struct {
	Create        []Stmt
	Queries       []Stmt
	Pre, Post     []Stmt
	ActualQueries uint64 // statements in --query (0 with --auto-generate-sql)
}

// Build generates (or reads) the statements, in mariadb-slap's order of
// random() draws: the table, the unique inserts, then the queries.
func (c *Config) Build(g *glibcRandom) (*Script, error) {
	s := &Script{}
	if c.AutoGenerate {
		s.Create = append(s.Create, Stmt{SQL: c.tableSQL(), Kind: KindCreate})
		for i := uint64(0); i < c.UniqueWriteNumber; i++ {
			s.Create = append(s.Create, c.insertSQL(g))
		}
		n := c.UniqueQueryNumber + 1 // the first, then one per unique query
		switch c.loadKind() {
		case LoadRead:
			for i := uint64(0); i < n; i++ {
				s.Queries = append(s.Queries, c.selectSQL(false))
			}
		case LoadKey:
			for i := uint64(0); i < n; i++ {
				s.Queries = append(s.Queries, c.selectSQL(true))
			}
		case LoadWrite:
			for i := uint64(0); i < n; i++ {
				s.Queries = append(s.Queries, c.insertSQL(g))
			}
		case LoadUpdate:
			for i := uint64(0); i < n; i++ {
				s.Queries = append(s.Queries, c.updateSQL(g))
			}
		default:
			// "every other": an insert, then a key select and an insert by turns.
			s.Queries = append(s.Queries, c.insertSQL(g))
			for i := uint64(0); i < c.UniqueQueryNumber; i++ {
				if i%2 == 1 {
					s.Queries = append(s.Queries, c.insertSQL(g))
				} else {
					s.Queries = append(s.Queries, c.selectSQL(true))
				}
			}
		}
	} else {
		var err error
		if c.Create != "" {
			if s.Create, _, err = c.statements(c.Create, "Create file"); err != nil {
				return nil, err
			}
		}
		if c.Query != "" {
			if s.Queries, s.ActualQueries, err = c.statements(c.Query, "User query supplied file"); err != nil {
				return nil, err
			}
		}
	}
	var err error
	if c.PreQuery != "" {
		if s.Pre, _, err = c.statements(c.PreQuery, "User query supplied file"); err != nil {
			return nil, err
		}
	}
	if c.PostQuery != "" {
		if s.Post, _, err = c.statements(c.PostQuery, "User query supplied file"); err != nil {
			return nil, err
		}
	}
	if len(c.Engines) > 0 && len(s.Create) > 0 && !c.AutoGenerate {
		// With --engine, mariadb-slap takes the first --create statement
		// for the CREATE TABLE that gets the engine clause.
		s.Create[0].Kind = KindCreate
	}
	return s, nil
}

// statements reads a --query, --create, --pre-query or --post-query value:
// the name of a regular file holding SQL, or SQL itself; split at the
// first character of --delimiter.
func (c *Config) statements(v, what string) ([]Stmt, uint64, error) {
	text := v
	if st, err := os.Stat(v); err == nil {
		if !st.Mode().IsRegular() {
			return nil, 0, message(what + " was not a regular file")
		}
		b, err := os.ReadFile(v)
		if err != nil {
			return nil, 0, message("Could not open " + strings.ToLower(what[:1]) + what[1:])
		}
		text = string(b)
	}
	delim := byte('\n')
	if c.Delimiter != "" {
		delim = c.Delimiter[0]
	}
	stmts, count := splitStatements(text, delim)
	return stmts, count, nil
}

// splitStatements is parse_delimiter: pieces between delimiters, one
// blank after each delimiter skipped, no piece after a trailing delimiter.
// It counts every piece, but a list ends at its first empty statement (as
// mariadb-slap's loops do), so the returned list stops there.
func splitStatements(text string, delim byte) ([]Stmt, uint64) {
	var all []string
	rest := text
	for {
		i := strings.IndexByte(rest, delim)
		if i < 0 {
			break
		}
		all = append(all, rest[:i])
		rest = rest[i+1:]
		if rest != "" && isSpace(rest[0]) {
			rest = rest[1:]
		}
	}
	if rest != "" {
		all = append(all, rest)
	}
	var out []Stmt
	for _, s := range all {
		if s == "" {
			break
		}
		out = append(out, Stmt{SQL: s, Kind: kindOf(s)})
	}
	return out, uint64(len(all))
}

// kindOf classifies a user statement for the runner's read/write counts.
func kindOf(s string) Kind {
	f := strings.ToUpper(strings.TrimSpace(s))
	switch {
	case strings.HasPrefix(f, "SELECT"):
		return KindSelect
	case strings.HasPrefix(f, "INSERT"), strings.HasPrefix(f, "REPLACE"):
		return KindInsert
	case strings.HasPrefix(f, "UPDATE"), strings.HasPrefix(f, "DELETE"):
		return KindUpdate
	}
	return KindOther
}

// IsRead and IsWrite sort a statement for the runner's counts.
func (k Kind) IsRead() bool  { return k == KindSelect || k == KindSelectKey }
func (k Kind) IsWrite() bool { return k == KindInsert || k == KindUpdate || k == KindUpdateKey }

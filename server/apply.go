package server

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/go-sql-driver/mysql"

	"benchmatrix/catalog"
)

// MismatchError says a variable did not take the value asked for.
type MismatchError struct {
	Name, Wanted, Actual string
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("%s: wanted %s, server has %s", e.Name, e.Wanted, e.Actual)
}

// ReadOnlyError says a variable cannot be changed while the server runs.
type ReadOnlyError struct {
	Name string
	Err  error
}

func (e *ReadOnlyError) Error() string {
	return fmt.Sprintf("%s needs a restart: %v", e.Name, e.Err)
}

func (e *ReadOnlyError) Unwrap() error { return e.Err }

// ER_INCORRECT_GLOBAL_LOCAL_VAR: "Variable '%s' is a read only variable".
const errReadOnlyVariable = 1238

// ApplyGlobals sets each variable with SET GLOBAL, then reads every one back
// from @@global. It returns the effective values by variable name. A value
// the server refuses is reported with the server's own message; a value that
// reads back different from what was asked is a *MismatchError.
func ApplyGlobals(ctx context.Context, db *sql.DB, settings []Setting) (map[string]string, error) {
	for _, s := range settings {
		name := catalog.VariableName(s.Name)
		if !validName(name) {
			return nil, fmt.Errorf("%q is not a valid variable name", s.Name)
		}
		stmt := fmt.Sprintf("SET GLOBAL %s = %s", name, SQLValue(s.Value))
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			var me *mysql.MySQLError
			if errors.As(err, &me) && me.Number == errReadOnlyVariable {
				return nil, &ReadOnlyError{Name: name, Err: err}
			}
			return nil, fmt.Errorf("set %s = %s: %w", name, s.Value, err)
		}
	}
	return CheckGlobals(ctx, db, settings)
}

// CheckGlobals reads each variable from @@global and compares it with the
// value wanted. It returns the effective values by variable name.
func CheckGlobals(ctx context.Context, db *sql.DB, settings []Setting) (map[string]string, error) {
	eff := make(map[string]string, len(settings))
	for _, s := range settings {
		name := catalog.VariableName(s.Name)
		actual, err := ReadGlobal(ctx, db, name)
		if err != nil {
			return nil, err
		}
		eff[name] = actual
		if !SameValue(name, s.Value, actual) {
			return eff, &MismatchError{Name: name, Wanted: s.Value, Actual: actual}
		}
	}
	return eff, nil
}

// ReadGlobal returns @@global.name as text.
func ReadGlobal(ctx context.Context, db *sql.DB, name string) (string, error) {
	name = catalog.VariableName(name)
	if !validName(name) {
		return "", fmt.Errorf("%q is not a valid variable name", name)
	}
	var v sql.NullString
	if err := db.QueryRowContext(ctx, "SELECT @@GLOBAL."+name).Scan(&v); err != nil {
		return "", fmt.Errorf("read @@global.%s: %w", name, err)
	}
	if !v.Valid {
		return "NULL", nil
	}
	return v.String, nil
}

var nameRE = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

func validName(name string) bool { return nameRE.MatchString(name) }

var sizeRE = regexp.MustCompile(`^(?i)(\d+(?:\.\d+)?)\s*([kmgt])i?b?$`)

// ParseSize reads a byte size written as a plain integer or with a K, M, G
// or T suffix (binary multiples, as the servers read them).
func ParseSize(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, true
	}
	m := sizeRE.FindStringSubmatch(s)
	if m == nil {
		return 0, false
	}
	f, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0, false
	}
	shift := map[string]uint{"k": 10, "m": 20, "g": 30, "t": 40}[strings.ToLower(m[2])]
	v := f * float64(uint64(1)<<shift)
	if v > math.MaxInt64 {
		return 0, false
	}
	return int64(v), true
}

// SQLValue renders a value for SET GLOBAL: numbers and sizes as integers,
// ON/OFF as keywords, anything else as a quoted string.
func SQLValue(v string) string {
	t := strings.TrimSpace(v)
	if n, ok := ParseSize(t); ok {
		return strconv.FormatInt(n, 10)
	}
	if _, err := strconv.ParseFloat(t, 64); err == nil {
		return t
	}
	switch strings.ToUpper(t) {
	case "ON", "OFF", "TRUE", "FALSE", "DEFAULT":
		return strings.ToUpper(t)
	}
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(t) + "'"
}

// SameValue reports whether the value read back from the server means the
// value that was asked for: booleans in any spelling, sizes in bytes,
// numbers numerically, other words case-insensitively.
func SameValue(name, wanted, actual string) bool {
	w, a := strings.TrimSpace(wanted), strings.TrimSpace(actual)
	if strings.EqualFold(w, a) {
		return true
	}
	if bw, ok := boolWord(w); ok {
		if ba, ok := boolWord(a); ok {
			return bw == ba
		}
	}
	if nw, ok := ParseSize(w); ok {
		if na, ok := ParseSize(a); ok {
			return nw == na
		}
	}
	fw, errW := strconv.ParseFloat(w, 64)
	fa, errA := strconv.ParseFloat(a, 64)
	return errW == nil && errA == nil && fw == fa
}

func boolWord(s string) (bool, bool) {
	switch strings.ToUpper(s) {
	case "ON", "TRUE", "1", "YES":
		return true, true
	case "OFF", "FALSE", "0", "NO":
		return false, true
	}
	return false, false
}

// Variables returns SHOW GLOBAL VARIABLES as a map by lower-case name. With
// names given, only those are read; names the server lacks are absent.
func Variables(ctx context.Context, db *sql.DB, names ...string) (map[string]string, error) {
	return showGlobal(ctx, db, "VARIABLES", names)
}

// Status returns SHOW GLOBAL STATUS as Variables does SHOW GLOBAL
// VARIABLES.
func Status(ctx context.Context, db *sql.DB, names ...string) (map[string]string, error) {
	return showGlobal(ctx, db, "STATUS", names)
}

func showGlobal(ctx context.Context, db *sql.DB, what string, names []string) (map[string]string, error) {
	q := "SHOW GLOBAL " + what
	var args []any
	if len(names) > 0 {
		q += " WHERE Variable_name IN (?" + strings.Repeat(",?", len(names)-1) + ")"
		for _, n := range names {
			args = append(args, catalog.VariableName(n))
		}
	}
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("read server %s: %w", strings.ToLower(what), err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var k string
		var v sql.NullString
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		out[strings.ToLower(k)] = v.String
	}
	return out, rows.Err()
}

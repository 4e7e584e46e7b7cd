package slap

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// slapBinary finds Debian's mariadb-slap (package mariadb-client), the
// yardstick; without it the comparison skips, unless CI is set.
func slapBinary(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"mariadb-slap", "mysqlslap"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("mariadb-slap is not installed (apt-get install mariadb-client)")
	}
	t.Skip("mariadb-slap is not installed (apt-get install mariadb-client)")
	return ""
}

func onlyPrint(t *testing.T, args []string) (string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	c, err := Parse(args, &errb)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	b := &Bench{Config: c, Out: &out, Err: &errb}
	if _, err := b.Run(context.Background()); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return out.String(), errb.String()
}

// TestOnlyPrintMatchesMariaDBSlap: for generated loads the SQL
// benchmatrix slap --only-print prints is mariadb-slap's, byte for byte
// (both draw from the C library's unseeded random()).
func TestOnlyPrintMatchesMariaDBSlap(t *testing.T) {
	bin := slapBinary(t)
	lines := []string{
		"-a",
		"-a --auto-generate-sql-load-type=read --number-of-queries=25 -c 1,3 --iterations=2",
		"-a --auto-generate-sql-load-type=write --number-of-queries=25 -c 1,3 --iterations=2",
		"-a --auto-generate-sql-load-type=update --number-of-queries=25 -c 2",
		"-a --auto-generate-sql-load-type=mixed --number-of-queries=25 -c 2",
		"-a --auto-generate-sql-load-type=key --auto-generate-sql-add-autoincrement --number-of-queries=30 -c 1,2",
		"-a --auto-generate-sql-load-type=key --auto-generate-sql-guid-primary -x 2:1 -y 3 --auto-generate-sql-secondary-indexes=2 --number-of-queries=7",
		"-a --auto-generate-sql-load-type=update --auto-generate-sql-add-autoincrement --commit=3 --number-of-queries=10 -e innodb,myisam",
		"-a --auto-generate-sql-write-number=37 --auto-generate-sql-unique-write-number=4 --auto-generate-sql-unique-query-number=3 --auto-generate-sql-execute-number=9",
		"-a -x 0 -y 0 --number-of-queries=3",
		"-a --engine=memory:max_rows=2300,myisam --number-of-queries=4 --pre-query=SELECT\\ 1 --post-query=SELECT\\ 2 --create-schema=other",
		"--query=SELECT\\ 1;SELECT\\ 2 --delimiter=; -c 2 --iterations=2 --number-of-queries=5",
		"--create=CREATE\\ TABLE\\ a(i\\ int);INSERT\\ INTO\\ a\\ VALUES\\ (1) --query=SELECT\\ *\\ FROM\\ a -F ; -e innodb --csv",
		"-a --csv --auto-generate-sql-load-type=write -c 1,2",
		"-ac2 --number-of-queries=4 --auto-generate-sql-load-type=read -vvv",
	}
	for _, line := range lines {
		args := splitArgs(line)
		want, err := exec.Command(bin, append([]string{"--no-defaults", "--only-print"}, args...)...).Output()
		if err != nil {
			t.Fatalf("mariadb-slap %s: %v", line, err)
		}
		got, _ := onlyPrint(t, append([]string{"--only-print"}, args...))
		wsql, wcsv := splitCSV(string(want))
		gsql, gcsv := splitCSV(got)
		// With more than one client, mariadb-slap's client threads print
		// as they are scheduled: the same lines, in an order of the
		// moment. Then the lines are compared as a multiset.
		if gsql != wsql && !(concurrentRE.MatchString(line) && sameLines(wsql, gsql)) {
			t.Errorf("benchmatrix slap --only-print %s differs from mariadb-slap:\n%s", line, firstDiff(wsql, gsql))
		}
		if strings.Join(gcsv, "") != strings.Join(wcsv, "") {
			t.Errorf("benchmatrix slap --only-print %s: CSV lines %q, mariadb-slap's %q", line, gcsv, wcsv)
		}
	}
}

// csvLineRE is an --only-print CSV line. mariadb-slap writes these with
// write(2) while its SQL sits in stdio's buffer, so they land
// mid-statement; the SQL and the CSV lines are compared apart. Its timings
// are near 0 (nothing is sent), but on a loaded machine mariadb-slap's own
// bookkeeping can take a few ms ("write,0.004,0.004,0.004"): they are
// compared as 0.
var (
	csvLineRE   = regexp.MustCompile(`(?:innodb|myisam|memory|)?,[a-z]+,[0-9]+\.[0-9]{3},[0-9]+\.[0-9]{3},[0-9]+\.[0-9]{3},[0-9]+,[0-9]+\n`)
	csvTimingRE = regexp.MustCompile(`,[0-9]+\.[0-9]{3},[0-9]+\.[0-9]{3},[0-9]+\.[0-9]{3},`)
)

func splitCSV(s string) (sql string, csv []string) {
	for _, l := range csvLineRE.FindAllString(s, -1) {
		csv = append(csv, csvTimingRE.ReplaceAllString(l, ",0.000,0.000,0.000,"))
	}
	return csvLineRE.ReplaceAllString(s, ""), csv
}

func splitArgs(line string) []string {
	var out []string
	var cur strings.Builder
	esc := false
	for _, r := range line {
		switch {
		case esc:
			cur.WriteRune(r)
			esc = false
		case r == '\\':
			esc = true
		case r == ' ':
			if cur.Len() > 0 {
				out = append(out, cur.String())
				cur.Reset()
			}
		default:
			cur.WriteRune(r)
		}
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}

func firstDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return "line " + strconv.Itoa(i+1) + ":\n  mariadb-slap: " + clip(w) + "\n  benchmatrix:  " + clip(g)
		}
	}
	return ""
}

func clip(s string) string {
	if len(s) > 160 {
		return s[:160] + "..."
	}
	return s
}

// concurrentRE: a command line with more than one client.
var concurrentRE = regexp.MustCompile(`(-c ?|--concurrency=)[0-9,]*[2-9]|-ac[2-9]`)

// sameLines reports whether a and b hold the same lines, in any order.
func sameLines(a, b string) bool {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	sort.Strings(la)
	sort.Strings(lb)
	return slices.Equal(la, lb)
}

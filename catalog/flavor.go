package catalog

import (
	"fmt"
	"regexp"
	"strings"
)

// Flavor is the server family, which decides initialisation commands,
// restart-only variables and where status counters live. The zero value
// means "not known yet" (a Docker image or an external server before it
// answers).
type Flavor string

// The flavors benchmatrix knows.
const (
	MariaDB Flavor = "mariadb"
	MySQL   Flavor = "mysql"
)

// Flavors are the known flavors, in a fixed order.
var Flavors = []Flavor{MariaDB, MySQL}

var versionRE = regexp.MustCompile(`Ver\s+(\S+)`)

// ParseVersionLine reads the flavor and version from what `mysqld
// --version` or `mariadbd --version` prints.
func ParseVersionLine(out string) (Flavor, string, error) {
	m := versionRE.FindStringSubmatch(out)
	if m == nil {
		return "", "", fmt.Errorf("printed %q: no version found", strings.TrimSpace(out))
	}
	if strings.Contains(strings.ToLower(out), "mariadb") {
		return MariaDB, m[1], nil
	}
	return MySQL, m[1], nil
}

// MySQL release series with a catalogue here: what initialises a datadir,
// which variables exist under which name, which need a restart. From
// MySQL's documentation (MySQL cannot be installed on the machines that
// build benchmatrix); every series is refused but these.
var mysqlSeries = []string{"5.7", "8.0", "8.4"}

// MySQLVersion is a MySQL server version: 8.0.36 → {8, 0, 36}.
type MySQLVersion struct{ Major, Minor, Patch int }

var mysqlVersionRE = regexp.MustCompile(`^(\d+)\.(\d+)\.(\d+)`)

// ParseMySQLVersion reads the numbers at the start of a version text
// ("8.4.3", "5.7.44-log").
func ParseMySQLVersion(v string) (MySQLVersion, error) {
	m := mysqlVersionRE.FindStringSubmatch(strings.TrimSpace(v))
	if m == nil {
		return MySQLVersion{}, fmt.Errorf("version %q: want major.minor.patch", v)
	}
	var out MySQLVersion
	for i, p := range []*int{&out.Major, &out.Minor, &out.Patch} {
		n := 0
		for _, c := range m[i+1] {
			n = n*10 + int(c-'0')
		}
		*p = n
	}
	return out, nil
}

func (v MySQLVersion) String() string { return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch) }

// Series is "8.0" for 8.0.36.
func (v MySQLVersion) Series() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

// AtLeast reports whether v is the version given ("8.0.26") or later.
func (v MySQLVersion) AtLeast(s string) bool {
	o, err := ParseMySQLVersion(s)
	if err != nil {
		return false
	}
	if v.Major != o.Major {
		return v.Major > o.Major
	}
	if v.Minor != o.Minor {
		return v.Minor > o.Minor
	}
	return v.Patch >= o.Patch
}

// CheckMySQLVersion refuses a MySQL version outside the catalogue, naming
// the series it knows: its initialisation, variable names and restart
// rules would be guesses.
func CheckMySQLVersion(version string) (MySQLVersion, error) {
	v, err := ParseMySQLVersion(version)
	if err != nil {
		return v, err
	}
	for _, s := range mysqlSeries {
		if v.Series() == s {
			return v, nil
		}
	}
	why := ""
	switch {
	case v.Major < 5 || (v.Major == 5 && v.Minor < 7):
		why = " (before 5.7 a datadir is initialised by scripts/mysql_install_db, and there is no performance_schema.replication_group_member_stats)"
	case v.Major == 8 && v.Minor > 0 && v.Minor < 4:
		why = " (an innovation release: use the 8.4 LTS)"
	default:
		why = " (newer than the catalogue: its removed and renamed variables are not known here)"
	}
	return v, fmt.Errorf("MySQL %s: benchmatrix has no catalogue for this version%s; known series: %s",
		v, why, strings.Join(mysqlSeries, ", "))
}

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

// FlavorOfVersion reads the flavor from a server's @@version text.
func FlavorOfVersion(version string) Flavor {
	if strings.Contains(strings.ToLower(version), "mariadb") {
		return MariaDB
	}
	return MySQL
}

package server

import "benchmatrix/catalog"

// Flavor is catalog.Flavor: the flavors and their variable catalogue live in
// package catalog, so that planning needs no server package; these names
// keep the providers' code short.
type Flavor = catalog.Flavor

// The flavors benchmatrix knows.
const (
	MariaDB = catalog.MariaDB
	MySQL   = catalog.MySQL
)

// restartOnly is the catalogue's verdict for the flavor and version the
// server has told (MySQL's rules are per version).
func restartOnly(f Flavor, version, name string) bool {
	return catalog.RestartNeed(catalog.TargetOf(f, version), name) == catalog.Restart
}

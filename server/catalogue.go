package server

import "benchmatrix/catalog"

// MariaDB is catalog.MariaDB, for results' tests (the flavors and their
// variable catalogue live in package catalog, so that planning needs no
// server package); the server package names catalog's.
const MariaDB = catalog.MariaDB

// restartOnly is the catalogue's verdict for the flavor and version the
// server has told (MySQL's rules are per version).
func restartOnly(f catalog.Flavor, version, name string) bool {
	return catalog.RestartNeed(catalog.TargetOf(f, version), name) == catalog.Restart
}

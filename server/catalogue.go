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

// restartOnly is the catalogue's verdict for a flavor the server has told.
func restartOnly(f Flavor, name string) bool {
	return catalog.RestartNeed(f, name) == catalog.Restart
}

// Package version holds benchmatrix's one version string, set at link time
// by `make build` (-ldflags -X benchmatrix/version.Version=...).
package version

// Version is the tool version recorded in results and printed by
// `benchmatrix version` and `benchmatrix oltp --version`; "dev" for a
// build without the Makefile.
var Version = "dev"

// Package catalog is what benchmatrix knows about servers before it touches
// one: the server flavors and which of their variables need a restart, and
// the server providers (sandbox, docker, external) with the manifest keys
// they read and the capabilities they offer.
//
// It imports nothing of benchmatrix and nothing heavy, so the manifest
// language (experiment/) can plan restarts and check capabilities without
// pulling in a Docker client, and the runner and the providers (server/)
// decide from the very same tables.
package catalog

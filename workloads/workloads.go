// Package workloads is benchmatrix's list of engines: adding an engine is
// its package and one line here. It sits above the engines it lists, so
// that engine/ imports none of them.
package workloads

import (
	"benchmatrix/engine"
	"benchmatrix/oltp"
	"benchmatrix/slap"
	"benchmatrix/tpcc"
)

// Engines are the engines a manifest's workload key may name, in the order
// help texts list them.
var Engines = engine.Registry{
	oltp.Descriptor,
	slap.Descriptor,
	tpcc.Descriptor,
}

// Package features lists what benchmatrix's features add to a run's
// reports: a feature's additions are its package's Report (a
// section.Feature) and one line here. It sits above the features it lists,
// so that results, which reads the list, imports none of them.
package features

import (
	capacity "benchmatrix/capacity/report"
	"benchmatrix/limits"
	"benchmatrix/profile"
	"benchmatrix/section"
	"benchmatrix/shard"
	topology "benchmatrix/topology/report"
	"benchmatrix/tpcc"
)

// Reports are the features' additions to the reports, in the order each
// place lists them.
var Reports = []section.Feature{
	limits.Report,
	tpcc.Report,
	profile.Report,
	shard.Report,
	capacity.Report,
	topology.Report,
}

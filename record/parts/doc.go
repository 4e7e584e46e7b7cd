// Package parts holds the parts of a run's record that the providers, the
// observers and the profiler fill in: the server's identity, the limits in
// force and the disk check (package server), the stall report, wait
// events, onset matching and contention (package observe), a profile's
// thread kinds, top functions and prediction (package profile). Its types
// depend on nothing but catalog, so that those packages can produce them
// without importing package record, whose Run and Cell carry the plan's and
// the engines' types (and the engines' tests start servers). Package record
// names the ones its Run and Cell hold again; server.Info,
// observe.StallReport, profile.Prediction and the rest are aliases of these.
package parts

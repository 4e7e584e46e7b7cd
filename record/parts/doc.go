// Package parts holds the parts of a run's record that the providers and
// the observers fill in: the server's identity, the limits in force and
// the disk check (package server), the stall report, wait events, onset
// matching and contention (package observe). Its types depend on nothing
// but catalog, so that server and observe can produce them without
// importing package record, whose Run and Cell carry the plan's and the
// engines' types (and the engines' tests start servers). Package record
// names each of them again; server.Info, observe.StallReport and the rest
// are aliases of these.
package parts

// Package record is the schema of a run's record: run.json's Run and Cell,
// and the pure data types the features put in it (the server's identity and
// limits, the stall report, wait events, contention, profiles, topology
// checks, shards, the fingerprint). It holds data and the pure functions
// over it, nothing that talks to a server or the OS, so that everything
// reading results (results/, compare, merge, report) builds without the
// providers: the old names (server.Info, observe.StallReport, results.Run,
// ...) are aliases of the types here.
package record

// Package record is the schema of a run's record: run.json's Run and Cell,
// and the pure data types the features put in it (the server's identity and
// limits, the stall report, wait events, contention, profiles, topology
// checks, shards, the fingerprint). It holds data and the pure functions
// over it, nothing that talks to a server or the OS, so that everything
// reading results (results/, compare, merge, report) builds without the
// providers. Everything outside uses the names here as they are (results
// keeps no second name for them).
package record

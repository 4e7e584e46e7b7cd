package runner

import "benchmatrix/oltp"

// OLTP is the built-in engine's Workload (oltp.Workload), for a Config
// that runs every cell on it.
type OLTP = oltp.Workload

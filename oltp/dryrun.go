package oltp

// --mysql-dry-run, as sysbench 1.0.20's MySQL driver does it: no
// connection is made and no statement is sent; every statement succeeds at
// once and counts as "other" (the driver reports no result set and no
// changed rows). The command line marks the configuration with the
// network name dryRunNet; sqlconn hands out connections to nowhere
// for it. Only run supports it here (prepare, prewarm and
// cleanup read answers from the server).

import "benchmatrix/sqlconn"

// dryRunNet is the mysql.Config network of a dry run (sqlconn's, whose
// connections do the rest).
const dryRunNet = sqlconn.DryRunNet

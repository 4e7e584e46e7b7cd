// Package tpcc is benchmatrix's TPC-C workload: the schema, data and five
// transactions that Percona-Lab's sysbench-tpcc (tpcc.lua for sysbench
// 1.0) creates and runs, written from its behaviour and from the TPC-C
// specification's public facts (NURand, the mix, sizes per warehouse).
//
// It has its own small engine (workers, per-type HDR histograms, report
// intervals) and reports through the oltp package's sysbench layout, so
// that `benchmatrix oltp /path/to/tpcc.lua ... prepare|run|cleanup` prints
// what sysbench prints for that script (cli.go). Metrics: NOPM (committed
// New-Order transactions per minute) and TPM (committed transactions of
// every type per minute), HammerDB's names; they are not audited tpmC.
package tpcc

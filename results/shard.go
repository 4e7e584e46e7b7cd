package results

import "benchmatrix/record"

// ShardRecord is in run.json of a shard run and of a merged run
// (record.ShardRecord). Issue 19.
type ShardRecord = record.ShardRecord

// MergedShard is one shard run inside a merged run (record.MergedShard).
type MergedShard = record.MergedShard

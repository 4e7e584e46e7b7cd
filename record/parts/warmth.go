package parts

// A cold start and the time to a steady state: what a cold cell's restart
// did to the server's caches, and when a cell's per-second series settled.

// ColdStart is what the cold start of a cell did: the server restarted
// once its data was in place (an empty buffer pool, an empty key cache),
// and the datadir's files dropped from the OS page cache, so that the
// first reads reach the disk (InnoDB reads with O_DIRECT and bypasses the
// page cache; MyISAM's data is read through it).
type ColdStart struct {
	// Restarted: the server was restarted for the cold start after the
	// data was in place; Why says why it was not, or was not needed (a
	// snapshot restore starts the server on the restored files).
	Restarted bool   `json:"restarted"`
	Why       string `json:"why,omitempty"`
	// PageCache: the datadir's files were dropped from the page cache
	// (posix_fadvise POSIX_FADV_DONTNEED after fdatasync, on the files of
	// the datadir the provider created); Files is how many, CachedBefore
	// and CachedAfter how many of their bytes were in the page cache
	// before and after (mincore).
	PageCache    bool   `json:"page_cache_dropped"`
	Files        int    `json:"files,omitempty"`
	CachedBefore int64  `json:"cached_before_bytes"`
	CachedAfter  int64  `json:"cached_after_bytes"`
	PageCacheWhy string `json:"page_cache_why,omitempty"` // why not dropped
	// PoolDataBytes is what the buffer pool held (data pages) once the
	// cold start was done, before prewarm and the run; -1 when unknown.
	PoolDataBytes int64 `json:"pool_data_bytes"`
}

// DropResult is what dropping a directory's files from the page cache did.
type DropResult struct {
	Files        int
	CachedBefore int64
	CachedAfter  int64
}

// Settled is when one per-second series settled (SettleRule).
type Settled struct {
	Series string `json:"series"` // the column: tps, bp_disk_reads_s, cg_reads_s
	// Seconds is the first second (on the cell's clock, from the engine's
	// first second) from which the series stayed within the band of its
	// final level; Settled is false when it did not settle within the
	// series (the climb still going at the end).
	Seconds float64 `json:"seconds"`
	Settled bool    `json:"settled"`
	// Level is the final level (the mean of the last window), First the
	// first window's mean, Band the tolerance around Level.
	Level float64 `json:"level"`
	First float64 `json:"first"`
	Band  float64 `json:"band"`
}

// SteadyState is a cell's time to a steady state: the latest of its
// series' settling times, from the engine's first second (warm-up
// included).
type SteadyState struct {
	Seconds float64   `json:"seconds"`
	Settled bool      `json:"settled"`
	Series  []Settled `json:"series"`
	// Rule says how it was decided, for the record.
	Rule string `json:"rule"`
	// AutoWarmup: warmup = "auto" ended the warm-up by the same rule,
	// after AutoSeconds (it needs the rule's hold seconds of steadiness
	// to see it).
	AutoWarmup  bool    `json:"auto_warmup,omitempty"`
	AutoSeconds float64 `json:"auto_seconds,omitempty"`
}

package oltp

// CheckRun validates o for a run: the options themselves and what the
// workload needs of them (rows to read, AUTO_INCREMENT for reinsert_id =
// auto). The manifest language checks every cell with it before anything
// starts.
func CheckRun(o Options) error { return checkRun(&o) }

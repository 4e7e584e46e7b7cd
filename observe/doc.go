// Package observe samples a server and its host while a benchmark cell
// runs, and explains the throughput series afterwards: stall episodes,
// their period, and which sampled metrics moved at their onsets.
package observe

package observe

import "math"

// Other tenants' IO in the stall attribution: a stall whose seconds another
// process's IO burst took the disk is the host's, as a stall whose seconds
// the host took the CPUs is (rundelay.go: Starved). The device's traffic
// not caused by the server (disk_other_kb_s) is weighed against the
// server's own in the same second: its cgroup's IO when it has one
// (cg_read_kb_s + cg_write_kb_s), else what /proc/PID/io says it caused
// (server_io_kb_s).

// Thresholds of OtherIODominated.
const (
	// otherIOFloorKBs: a second below this much other IO is never the
	// host's (the filesystem journal alone writes a few hundred KiB/s).
	otherIOFloorKBs = 1024
	// otherIOBurst: the second's other IO is at least this many times its
	// median over the window: a burst, not the disk's usual neighbours.
	otherIOBurst = 4
	// otherIOShare: and at least this many times the server's own IO in
	// that second: the others dominated the device.
	otherIOShare = 2
)

// OtherIODominated marks the rows in which other processes' IO dominated
// the datadir's device: at least 1 MiB/s, at least 4 times its median over
// the rows and at least twice the server's own IO. Rows without
// disk_other_kb_s are never marked. On cgroup v1 the kernel's writeback of
// pages the server dirtied earlier (MyISAM, a binary log with
// sync_binlog = 0) is not the server's by either count and can read as
// other IO; InnoDB's O_DIRECT and fsync'd writes are the server's.
func OtherIODominated(rows []Row) []bool {
	out := make([]bool, len(rows))
	other := make([]float64, len(rows))
	for i, r := range rows {
		other[i] = r.Get("disk_other_kb_s")
	}
	med := median(finite(other))
	if math.IsNaN(med) {
		return out
	}
	for i, r := range rows {
		o := other[i]
		if math.IsNaN(o) || o < otherIOFloorKBs || o < otherIOBurst*med {
			continue
		}
		own := r.Get("cg_read_kb_s") + r.Get("cg_write_kb_s")
		if math.IsNaN(own) {
			own = r.Get("server_io_kb_s")
		}
		if math.IsNaN(own) {
			own = 0
		}
		out[i] = o >= otherIOShare*own
	}
	return out
}

package parts

import "benchmatrix/catalog"

// ServerInfo describes a running server (server.Info).
type ServerInfo struct {
	Provider string         `json:"provider"`
	Flavor   catalog.Flavor `json:"flavor"`
	Version  string         `json:"version"`
	Binary   string         `json:"binary,omitempty"`
	Address  string         `json:"address"`
	Datadir  string         `json:"datadir,omitempty"`
}

// LimitsInForce is what a server runs under, as read back.
type LimitsInForce struct {
	Requested catalog.LimitSet  `json:"requested"`
	Mechanism string            `json:"mechanism"` // cgroup v1, cgroup v2, docker HostConfig
	Cgroup    string            `json:"cgroup,omitempty"`
	Device    string            `json:"device,omitempty"` // the datadir's disk, "254:0 (vda)"
	ReadBack  map[string]string `json:"read_back"`
}

// DiskCheck is the self-check of a disk limit.
type DiskCheck struct {
	Seconds float64 `json:"seconds"`
	// Loops are write+fsync pairs done; LoopsPerSec their rate.
	Loops       int     `json:"loops"`
	LoopsPerSec float64 `json:"loops_per_sec"`
	// DeviceWriteIOPS is the write IOs the cgroup counted per second on
	// the device: what the cap limits (an fsync costs more than one IO).
	DeviceWriteIOPS float64 `json:"device_write_iops"`
	FsyncAvgMs      float64 `json:"fsync_avg_ms"`
	FsyncMaxMs      float64 `json:"fsync_max_ms"`
	// CapWriteIOPS is the requested cap; Ratio is DeviceWriteIOPS / cap.
	CapWriteIOPS int64   `json:"cap_write_iops,omitempty"`
	Ratio        float64 `json:"ratio,omitempty"`
}

package k8s

import (
	"encoding/json"
	"os"
	"path/filepath"

	"benchmatrix/results"
)

// RecordNode makes the shard run in dir name the node it ran on as its
// host: in a pod, the host name is the pod's, and the machine is what a
// merged run must tell apart. The pod's name stays in a note.
func RecordNode(dir, node string) error {
	r, err := results.ReadRun(dir)
	if err != nil {
		return err
	}
	pod := r.Host.Hostname
	if node == "" || pod == node {
		return nil
	}
	r.Host.Hostname = node
	r.Notes = append(r.Notes, "ran in Kubernetes pod "+pod+" on node "+node+" (the host is the node)")
	if r.Fingerprint != nil {
		r.Fingerprint.Host.Hostname = node
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(dir, results.RunFile)
	tmp := path + ".node.tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

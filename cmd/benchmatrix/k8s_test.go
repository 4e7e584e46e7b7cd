package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"benchmatrix/k8s"
	"benchmatrix/results"
)

// TestK8sJobShortOfACluster does what a cluster would with the Job that
// `benchmatrix k8s` prints, short of submitting it (none runs here): the
// ConfigMap's data become the files of its mount, each pod's command line
// from the Job runs with JOB_COMPLETION_INDEX and the node's name set as
// Kubernetes sets them, the pods' combined output is their log, and
// `k8s collect` turns the logs back into shard directories and merges them.
func TestK8sJobShortOfACluster(t *testing.T) {
	needServer(t)
	m := writeManifest(t, strings.Replace(shardManifest, "repeats = 3", "repeats = 2", 1))
	out, code := bm(t, "k8s", m, "--shards", "2", "--image", "registry.example/benchmatrix:test")
	if code != 0 {
		t.Fatalf("k8s: exit %d\n%s", code, out)
	}
	var yamlText []string
	for _, l := range strings.SplitAfter(out, "\n") {
		if !strings.HasPrefix(l, "#") {
			yamlText = append(yamlText, l)
		}
	}
	cm, job, err := k8s.ReadYAML([]byte(strings.Join(yamlText, "")))
	if err != nil {
		t.Fatal(err)
	}
	// The kubelet's part: the ConfigMap mounted, a results volume.
	root := t.TempDir()
	mount := filepath.Join(root, "etc-benchmatrix")
	vol := filepath.Join(root, "results")
	_ = os.MkdirAll(mount, 0o755)
	_ = os.MkdirAll(vol, 0o755)
	for name, text := range cm.Data {
		if err := os.WriteFile(filepath.Join(mount, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := job.Spec.Template.Spec.Containers[0]
	var logs bytes.Buffer
	for idx := 0; idx < int(*job.Spec.Completions); idx++ {
		var args []string
		for _, a := range c.Args {
			a = strings.Replace(a, k8s.ManifestMount, mount, 1)
			args = append(args, strings.Replace(a, k8s.ResultsMount, vol, 1))
		}
		pod := exec.Command(binary, args...)
		pod.Env = append(os.Environ(), k8s.IndexEnv+"="+itoa(idx), k8s.NodeEnv+"=node-"+itoa(idx))
		var podLog bytes.Buffer
		pod.Stdout, pod.Stderr = &podLog, &podLog
		if err := pod.Run(); err != nil {
			t.Fatalf("pod %d: %v\n%s", idx, err, podLog.String())
		}
		for _, l := range strings.SplitAfter(podLog.String(), "\n") {
			if l != "" {
				logs.WriteString("[pod/" + job.Name + "-" + itoa(idx) + "/shard] " + l)
			}
		}
	}
	logFile := filepath.Join(root, "logs.txt")
	_ = os.WriteFile(logFile, logs.Bytes(), 0o644)

	dir := filepath.Join(root, "collected")
	if out, code := bm(t, "k8s", "collect", "-o", dir, logFile); code != 0 {
		t.Fatalf("collect: exit %d\n%s", code, out)
	}
	r, err := results.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Cells) != 8 || r.Shard == nil || len(r.Shard.Merged) != 2 {
		t.Fatalf("merged: %d cells, %+v", len(r.Cells), r.Shard)
	}
	for _, cell := range r.Cells {
		// Pod index i is shard i+1, which ran round i+1 on node-i.
		if cell.Shard != cell.Repeat || cell.Host != "node-"+itoa(cell.Repeat-1) {
			t.Errorf("%s #%d: shard %d on %q", cell.Name, cell.Repeat, cell.Shard, cell.Host)
		}
	}
	if out, code := bm(t, "report", dir); code != 0 {
		t.Errorf("report: %s", out)
	}
	// A pod of a Job that is not Indexed has no index: refused, exit 2.
	pod := exec.Command(binary, "k8s-task", "--shards", "2", "--manifest", m, "--out", vol)
	pod.Env = append(os.Environ(), k8s.IndexEnv+"=")
	if out, err := pod.CombinedOutput(); exitStatus(err) != 2 || !strings.Contains(string(out), "completionMode Indexed") {
		t.Errorf("k8s-task without an index: exit %d\n%s", exitStatus(err), out)
	}
}

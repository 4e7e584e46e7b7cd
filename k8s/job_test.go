package k8s

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"benchmatrix/experiment"
)

// shipped loads a shipped manifest as the k8s command does.
func shipped(t *testing.T, name string) Config {
	t.Helper()
	m, err := experiment.Load(filepath.Join("..", "manifests", name))
	if err != nil {
		t.Fatal(err)
	}
	return Config{Experiment: m.Name, ManifestFile: name, ManifestText: m.Stored(), Shards: 3,
		Image: "registry.example/benchmatrix:test", RunArgs: []string{"--duration", "10s"}, CPU: "2", Memory: "4Gi", DeadlineSeconds: 3600}
}

// TestRoundTrip: the objects for shipped manifests survive YAML and come
// back as the same k8s.io/api values (strict: no field the types lack).
func TestRoundTrip(t *testing.T) {
	for _, name := range []string{"flush.toml", "smoke.toml", "threads.toml"} {
		for _, claim := range []string{"", "bench-results"} {
			cfg := shipped(t, name)
			cfg.VolumeClaim = claim
			cm, job, err := Objects(cfg)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := WriteYAML(&b, cm, job); err != nil {
				t.Fatal(err)
			}
			cm2, job2, err := ReadYAML(b.Bytes())
			if err != nil {
				t.Fatalf("%s: %v\n%s", name, err, b.String())
			}
			if !equality.Semantic.DeepEqual(cm, cm2) || !equality.Semantic.DeepEqual(job, job2) {
				t.Errorf("%s: the objects changed through YAML:\n%#v\n%#v", name, job.Spec, job2.Spec)
			}
			// And once more: the printed text is stable.
			var again bytes.Buffer
			_ = WriteYAML(&again, cm2, job2)
			if again.String() != b.String() {
				t.Errorf("%s: YAML differs after a round trip", name)
			}
		}
	}
}

// TestJobWiring: the Job is Indexed with one completion per shard, its
// pods run k8s-task with the shard count and the ConfigMap's manifest, and
// results go to an emptyDir or the claim.
func TestJobWiring(t *testing.T) {
	cfg := shipped(t, "flush.toml")
	cm, job, err := Objects(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := job.Spec
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion || *s.Completions != 3 || *s.Parallelism != 3 {
		t.Errorf("job spec: mode %v completions %v parallelism %v", s.CompletionMode, s.Completions, s.Parallelism)
	}
	pod := s.Template.Spec
	if pod.RestartPolicy != corev1.RestartPolicyNever || len(pod.Containers) != 1 {
		t.Fatalf("pod: %+v", pod)
	}
	c := pod.Containers[0]
	want := []string{"k8s-task", "--shards", "3", "--manifest", ManifestMount + "/flush.toml", "--out", ResultsMount, "--", "--duration", "10s"}
	if !reflect.DeepEqual(c.Args, want) || c.Command[0] != DefaultBinary {
		t.Errorf("command %v args %v, want %v", c.Command, c.Args, want)
	}
	if cm.Data["flush.toml"] != cfg.ManifestText || !strings.Contains(cm.Data["flush.toml"], "[experiment]") {
		t.Errorf("ConfigMap data %v", cm.Data)
	}
	vols := map[string]corev1.VolumeSource{}
	for _, v := range pod.Volumes {
		vols[v.Name] = v.VolumeSource
	}
	if vols["manifest"].ConfigMap == nil || vols["manifest"].ConfigMap.Name != cm.Name {
		t.Errorf("manifest volume %+v, want ConfigMap %s", vols["manifest"], cm.Name)
	}
	if vols["results"].EmptyDir == nil {
		t.Errorf("results volume %+v, want an emptyDir", vols["results"])
	}
	if c.Env[0].Name != NodeEnv || c.Env[0].ValueFrom.FieldRef.FieldPath != "spec.nodeName" {
		t.Errorf("env %+v", c.Env)
	}
	if q := c.Resources.Limits[corev1.ResourceCPU]; q.String() != "2" {
		t.Errorf("cpu limit %s", q.String())
	}
	rules := s.PodFailurePolicy.Rules
	if len(rules) != 2 || rules[0].Action != batchv1.PodFailurePolicyActionFailIndex || !reflect.DeepEqual(rules[0].OnExitCodes.Values, []int32{1, 2}) {
		t.Errorf("pod failure policy %+v", rules)
	}
	cfg.VolumeClaim = "bench"
	_, job, _ = Objects(cfg)
	for _, v := range job.Spec.Template.Spec.Volumes {
		if v.Name == "results" && (v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != "bench") {
			t.Errorf("results volume with a claim: %+v", v)
		}
	}
	for _, bad := range []Config{{Shards: 0, Image: "x"}, {Shards: 2}, {Shards: 2, Image: "x", CPU: "two"},
		{Shards: 2, Image: "x", CPU: "-1"}, {Shards: 2, Image: "x", CPU: "0"}, {Shards: 2, Image: "x", Memory: "-5Gi"}, {Shards: 2, Image: "x", Memory: "0Mi"},
		{Shards: 2, Image: "bad image"}, {Shards: 2, Image: "x", Namespace: "Bad_NS"}, {Shards: 2, Image: "x", VolumeClaim: "Bad_Claim"}} {
		if _, _, err := Objects(bad); err == nil {
			t.Errorf("Objects(%+v) accepted", bad)
		}
	}
}

func TestDNSName(t *testing.T) {
	for in, want := range map[string]string{
		"benchmatrix-flush":        "benchmatrix-flush",
		"Benchmatrix_Flush.Policy": "benchmatrix-flush-policy",
		"--x--":                    "x",
		"":                         "benchmatrix",
		strings.Repeat("a", 70):    strings.Repeat("a", 52),
	} {
		if got := DNSName(in); got != want {
			t.Errorf("DNSName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestStream: shard directories travel through logs that interleave two
// pods' lines, with kubectl's --prefix, and come back byte for byte; a
// changed line, a cut log and a path out of the directory are refused.
func TestStream(t *testing.T) {
	src := t.TempDir()
	files := map[string]string{"run.json": "{}\n", "cells.csv": "cell\n", "plots/a.svg": strings.Repeat("<svg/>", 5000), ".lock": "1\n"}
	for name, body := range files {
		p := filepath.Join(src, name)
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var a, b bytes.Buffer
	a.WriteString("progress line\n")
	if err := WriteShard(&a, 1, 2, src); err != nil {
		t.Fatal(err)
	}
	if err := WriteShard(&b, 2, 2, src); err != nil {
		t.Fatal(err)
	}
	// Interleave the two pods' lines, each with its prefix.
	la, lb := strings.SplitAfter(a.String(), "\n"), strings.SplitAfter(b.String(), "\n")
	var log strings.Builder
	for i := 0; i < max(len(la), len(lb)); i++ {
		if i < len(la) && la[i] != "" {
			log.WriteString("[pod/bench-0-x/shard] " + la[i])
		}
		if i < len(lb) && lb[i] != "" {
			log.WriteString("[pod/bench-1-y/shard] " + lb[i])
		}
	}
	shards, err := Collect(strings.NewReader(log.String()))
	if err != nil || len(shards) != 2 || shards[0].K != 1 || shards[1].K != 2 {
		t.Fatalf("Collect: %d shards, %v", len(shards), err)
	}
	dst := filepath.Join(t.TempDir(), "s1")
	if err := shards[0].Extract(dst); err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		got, err := os.ReadFile(filepath.Join(dst, name))
		if name == ".lock" {
			if err == nil {
				t.Error("the lock file travelled")
			}
			continue
		}
		if err != nil || string(got) != body {
			t.Errorf("%s: %v, %d bytes (want %d)", name, err, len(got), len(body))
		}
	}
	lines := strings.Split(a.String(), "\n")
	lines[3] = strings.Replace(lines[3], lines[3][:4], "AAAA", 1)
	if lines[3] == strings.Split(a.String(), "\n")[3] {
		lines[3] = "BBBB" + lines[3][4:]
	}
	if _, err := Collect(strings.NewReader(strings.Join(lines, "\n"))); err == nil || !strings.Contains(err.Error(), "shard 1/2: checksum") {
		t.Errorf("a changed line: %v", err)
	}
	if _, err := Collect(strings.NewReader(a.String()[:a.Len()/2])); err == nil || !strings.Contains(err.Error(), "ends inside its archive") {
		t.Errorf("a cut log: %v", err)
	}
}

// TestExtractRefusesEscapes: an archive entry naming a path outside the
// shard directory is refused, and nothing is written there.
func TestExtractRefusesEscapes(t *testing.T) {
	var arch bytes.Buffer
	gz := gzip.NewWriter(&arch)
	tw := tar.NewWriter(gz)
	body := []byte("x")
	_ = tw.WriteHeader(&tar.Header{Name: "../escaped", Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg})
	_, _ = tw.Write(body)
	_ = tw.Close()
	_ = gz.Close()
	root := t.TempDir()
	err := Shard{K: 1, N: 1, Archive: arch.Bytes()}.Extract(filepath.Join(root, "s"))
	if err == nil || !strings.Contains(err.Error(), "leaves the directory") {
		t.Errorf("Extract: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "escaped")); err == nil {
		t.Error("the entry was written outside")
	}
}

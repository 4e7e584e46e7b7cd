// Package k8s writes the Kubernetes objects that run a plan's shards as an
// Indexed Job (issue 19), built with the official k8s.io/api types: a
// ConfigMap with the manifest, and a Job with completionMode Indexed whose
// pod K-1 (JOB_COMPLETION_INDEX, set by Kubernetes) runs `benchmatrix run
// --shard K/N` with the sandbox provider and prints its shard directory as
// a framed, checksummed tar on its log, which `benchmatrix k8s collect`
// turns back into shard directories (stream.go). A persistent volume claim
// can hold the shard directories instead, or as well.
//
// Nothing here talks to a cluster: the objects are printed for kubectl.
package k8s

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// Paths inside a pod.
const (
	ManifestMount = "/etc/benchmatrix"
	ResultsMount  = "/results"
	DefaultBinary = "/usr/local/bin/benchmatrix"
	// IndexEnv is the variable Kubernetes sets in each pod of an Indexed
	// Job: the completion index, from 0.
	IndexEnv = "JOB_COMPLETION_INDEX"
	// NodeEnv carries the node's name (downward API): the machine a shard
	// ran on, which the task records as its host.
	NodeEnv = "BENCHMATRIX_NODE_NAME"
	// ContainerName is the shard container's name.
	ContainerName = "shard"
)

// Label keys on the objects.
const (
	LabelApp        = "app.kubernetes.io/name"
	LabelExperiment = "benchmatrix.io/experiment"
	LabelShards     = "benchmatrix.io/shards"
)

// Config says what the Job runs.
type Config struct {
	Name      string // object names; default benchmatrix-<experiment>
	Namespace string
	// Experiment is the manifest's experiment name, for labels.
	Experiment   string
	ManifestFile string // the file name in the ConfigMap
	ManifestText string // redacted (experiment.Manifest.Stored)
	Shards       int
	// Image must hold the benchmatrix binary (at Binary) and mariadbd.
	Image  string
	Binary string
	// RunArgs are run flags for every shard (--duration 10s ...).
	RunArgs []string
	// CPU and Memory, when set, are each pod's requests and limits (a
	// Guaranteed pod: a benchmark wants a quiet, fixed share).
	CPU, Memory string
	// VolumeClaim, when set, holds the results (/results) instead of an
	// emptyDir, so that an interrupted shard resumes where it stopped.
	VolumeClaim string
	// NoStream leaves the tar off the pod's log (with VolumeClaim).
	NoStream bool
	// Deadline bounds the Job (activeDeadlineSeconds); 0 for none.
	DeadlineSeconds int64
}

var nameRE = regexp.MustCompile(`[^a-z0-9-]+`)

// DNSName makes s a valid object name (RFC 1123 label, at most 52
// characters to leave room for the pods' suffixes).
func DNSName(s string) string {
	s = strings.Trim(nameRE.ReplaceAllString(strings.ToLower(s), "-"), "-")
	if len(s) > 52 {
		s = strings.TrimRight(s[:52], "-")
	}
	if s == "" {
		s = "benchmatrix"
	}
	return s
}

// Objects are the ConfigMap and the Job for cfg.
func Objects(cfg Config) (*corev1.ConfigMap, *batchv1.Job, error) {
	if cfg.Shards < 1 {
		return nil, nil, fmt.Errorf("k8s: --shards %d: want at least 1", cfg.Shards)
	}
	if cfg.Image == "" {
		return nil, nil, fmt.Errorf("k8s: --image is required: an image holding %s and mariadbd, in a registry the cluster pulls from", DefaultBinary)
	}
	if strings.ContainsAny(cfg.Image, " \t\n") {
		return nil, nil, fmt.Errorf("k8s: --image %q: an image reference has no spaces", cfg.Image)
	}
	// What the API server would refuse at `kubectl apply`, refused here.
	if errs := validation.IsDNS1123Label(cfg.Namespace); cfg.Namespace != "" && len(errs) > 0 {
		return nil, nil, fmt.Errorf("k8s: --namespace %q: not a namespace name: %s", cfg.Namespace, strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1123Subdomain(cfg.VolumeClaim); cfg.VolumeClaim != "" && len(errs) > 0 {
		return nil, nil, fmt.Errorf("k8s: --volume-claim %q: not a PersistentVolumeClaim name: %s", cfg.VolumeClaim, strings.Join(errs, "; "))
	}
	if cfg.Binary == "" {
		cfg.Binary = DefaultBinary
	}
	if cfg.Name == "" {
		cfg.Name = "benchmatrix-" + cfg.Experiment
	}
	cfg.Name = DNSName(cfg.Name)
	labels := map[string]string{
		LabelApp:        "benchmatrix",
		LabelExperiment: DNSName(cfg.Experiment),
		LabelShards:     strconv.Itoa(cfg.Shards),
	}
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: cfg.Name + "-manifest", Namespace: cfg.Namespace, Labels: labels},
		Data:       map[string]string{cfg.ManifestFile: cfg.ManifestText},
	}
	n := int32(cfg.Shards)
	indexed := batchv1.IndexedCompletion
	one := int32(1)
	args := []string{"k8s-task", "--shards", strconv.Itoa(cfg.Shards),
		"--manifest", ManifestMount + "/" + cfg.ManifestFile, "--out", ResultsMount}
	if cfg.NoStream {
		args = append(args, "--no-stream")
	}
	args = append(append(args, "--"), cfg.RunArgs...)
	results := corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}
	if cfg.VolumeClaim != "" {
		results = corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: cfg.VolumeClaim}}
	}
	container := corev1.Container{
		Name:    ContainerName,
		Image:   cfg.Image,
		Command: []string{cfg.Binary},
		Args:    args,
		Env: []corev1.EnvVar{{Name: NodeEnv, ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "spec.nodeName"}}}},
		VolumeMounts: []corev1.VolumeMount{
			{Name: "manifest", MountPath: ManifestMount, ReadOnly: true},
			{Name: "results", MountPath: ResultsMount},
		},
		ImagePullPolicy: corev1.PullIfNotPresent,
	}
	if cfg.CPU != "" || cfg.Memory != "" {
		rl := corev1.ResourceList{}
		for _, r := range []struct {
			name corev1.ResourceName
			v    string
		}{{corev1.ResourceCPU, cfg.CPU}, {corev1.ResourceMemory, cfg.Memory}} {
			if r.v == "" {
				continue
			}
			flag := "--" + strings.ToLower(string(r.name))
			q, err := resource.ParseQuantity(r.v)
			if err != nil {
				return nil, nil, fmt.Errorf("k8s: %s %q: %v", flag, r.v, err)
			}
			// The API server takes a negative request (a Job nobody can
			// schedule, or a pod killed at once); a zero limit is none.
			if q.Sign() <= 0 {
				return nil, nil, fmt.Errorf("k8s: %s %q: want a positive quantity (e.g. %s)", flag, r.v, map[corev1.ResourceName]string{
					corev1.ResourceCPU: "2 or 500m", corev1.ResourceMemory: "4Gi"}[r.name])
			}
			rl[r.name] = q
		}
		container.Resources = corev1.ResourceRequirements{Requests: rl, Limits: rl}
	}
	shardContainer := ContainerName
	job := &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: cfg.Name, Namespace: cfg.Namespace, Labels: labels},
		Spec: batchv1.JobSpec{
			CompletionMode: &indexed,
			Completions:    &n,
			Parallelism:    &n,
			// An evicted or preempted pod is run again (its index only);
			// a shard that ran and failed is not: exit 1 (cells failed) and
			// 2 (the manifest refused) would fail again.
			BackoffLimitPerIndex: &one,
			MaxFailedIndexes:     &n,
			PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
				{Action: batchv1.PodFailurePolicyActionFailIndex, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
					ContainerName: &shardContainer, Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{1, 2}}},
				{Action: batchv1.PodFailurePolicyActionIgnore, OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{
					{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}}},
			}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{container},
					// One shard per machine where the cluster allows: the
					// machine is then a unit of replication, and shards do
					// not compete for one node.
					TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{
						MaxSkew: 1, TopologyKey: "kubernetes.io/hostname", WhenUnsatisfiable: corev1.ScheduleAnyway,
						LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{LabelExperiment: DNSName(cfg.Experiment)}},
					}},
					Volumes: []corev1.Volume{
						{Name: "manifest", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
							LocalObjectReference: corev1.LocalObjectReference{Name: cm.Name}}}},
						{Name: "results", VolumeSource: results},
					},
				},
			},
		},
	}
	if cfg.DeadlineSeconds > 0 {
		job.Spec.ActiveDeadlineSeconds = &cfg.DeadlineSeconds
	}
	return cm, job, nil
}

// WriteYAML prints the objects as one YAML stream for kubectl apply -f -.
func WriteYAML(w io.Writer, cm *corev1.ConfigMap, job *batchv1.Job) error {
	for i, obj := range []any{cm, job} {
		b, err := yaml.Marshal(obj)
		if err != nil {
			return err
		}
		if i > 0 {
			if _, err := io.WriteString(w, "---\n"); err != nil {
				return err
			}
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// ReadYAML parses what WriteYAML printed, strictly (an unknown field is an
// error), into the same types.
func ReadYAML(b []byte) (*corev1.ConfigMap, *batchv1.Job, error) {
	docs := bytes.Split(b, []byte("\n---\n"))
	if len(docs) != 2 {
		return nil, nil, fmt.Errorf("want 2 YAML documents (ConfigMap, Job), got %d", len(docs))
	}
	var cm corev1.ConfigMap
	var job batchv1.Job
	if err := yaml.UnmarshalStrict(docs[0], &cm); err != nil {
		return nil, nil, fmt.Errorf("the ConfigMap: %w", err)
	}
	if err := yaml.UnmarshalStrict(docs[1], &job); err != nil {
		return nil, nil, fmt.Errorf("the Job: %w", err)
	}
	return &cm, &job, nil
}

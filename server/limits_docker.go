package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"benchmatrix/catalog"
)

// dockerLimits is what a Docker server keeps about its limits: the set
// every new container is created with (HostConfig), and the container's
// own cgroup (created and removed by the engine, only written here) for
// live changes between cells. Docker's `update` cannot change device
// throttles, so live changes write the cgroup files, as the engine does.
type dockerLimits struct {
	want    catalog.LimitSet
	dev     string // "MAJ:MIN" of the host datadir's disk
	devPath string // "/dev/vda", for HostConfig
	group   *cgroupGroup
	groupOf string // the container id group belongs to
	applied catalog.LimitSet
	// oomTold is the container whose OOM kill MemoryKilled reported.
	oomTold string
}

// MemoryKilled implements OOMReporter from the engine's OOMKilled state:
// the container's first process is its server, so a kill by the memory
// limit ends the container and the engine records why (its cgroup, and
// the cgroup's counter, go with it).
func (d *Docker) MemoryKilled() string {
	id := d.containerID()
	if id == "" || id == d.lim.oomTold {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), dockerProbeTimeout)
	defer cancel()
	c, err := d.pool.Client.InspectContainerWithContext(id, ctx)
	if err != nil || !c.State.OOMKilled {
		return ""
	}
	d.lim.oomTold = id
	return memoryKillNote(1, d.lim.applied)
}

// SetLimits implements Limiter: the container's cgroup is written and read
// back; new containers (restarts) get the limits in their HostConfig.
func (d *Docker) SetLimits(_ context.Context, l catalog.LimitSet) (LimitsInForce, error) {
	l = l.Server()
	in := LimitsInForce{Requested: l, ReadBack: map[string]string{}}
	if err := d.findDevice(l); err != nil {
		return in, err
	}
	d.lim.want = l
	if l.IsZero() && d.lim.applied.IsZero() {
		in.Mechanism = "none"
		return in, nil
	}
	g, err := d.containerGroup()
	if err != nil {
		return in, err
	}
	back, err := g.apply(l, d.lim.dev)
	if err != nil {
		return in, fmt.Errorf("limits: %w", err)
	}
	d.lim.applied = l
	in.Mechanism = "docker HostConfig + cgroup " + g.version()
	in.Cgroup, in.ReadBack = g.Path(), back
	if d.lim.dev != "" {
		in.Device = d.lim.dev + " (" + d.lim.devPath + ")"
	}
	return in, nil
}

func (d *Docker) findDevice(l catalog.LimitSet) error {
	if d.lim.dev != "" || !l.Disk() {
		return nil
	}
	dev, name, err := BlockDevice(d.dir)
	if err != nil {
		return err
	}
	d.lim.dev, d.lim.devPath = dev, "/dev/"+name
	return nil
}

// containerGroup adopts the running container's cgroup (found from its
// server's host pid); it is never removed here.
func (d *Docker) containerGroup() (*cgroupGroup, error) {
	id := d.containerID()
	if d.lim.group != nil && d.lim.groupOf == id {
		return d.lim.group, nil
	}
	pid := d.PID()
	if pid == 0 {
		return nil, &LimitsUnsupportedError{Msg: "docker: the container's server is not visible from this host (a remote engine?): limits cannot be changed live"}
	}
	g, err := adoptCgroup(CgroupRoot, filepath.Join("/proc", strconv.Itoa(pid), "cgroup"))
	if err != nil {
		return nil, err
	}
	d.lim.group, d.lim.groupOf = g, id
	return g, nil
}

// adoptCgroup is the cgroup a process is in, as a group benchmatrix may
// write but not remove.
func adoptCgroup(root, procFile string) (*cgroupGroup, error) {
	paths := selfCgroups(procFile)
	g := &cgroupGroup{v2: cgroupV2(root), dirs: map[string]string{}, own: map[string]string{}, root: root}
	self := selfCgroups("/proc/self/cgroup")
	if g.v2 {
		p, ok := paths[""]
		if !ok {
			return nil, errors.New("no cgroup v2 path for the container")
		}
		g.dirs[""] = filepath.Join(root, p)
		return g, nil
	}
	for _, c := range v1Controllers {
		if p, ok := paths[c]; ok {
			if _, err := os.Stat(filepath.Join(root, c, p)); err == nil {
				g.dirs[c] = filepath.Join(root, c, p)
				g.own[c] = filepath.Join(root, c, self[c])
			}
		}
	}
	if len(g.dirs) == 0 {
		return nil, fmt.Errorf("the container's cgroup (%s) is not visible under %s", procFile, root)
	}
	return g, nil
}

// liftLimits lifts the container's limits before it is stopped.
func (d *Docker) liftLimits() {
	if d.lim.group == nil || d.lim.applied.IsZero() || d.lim.groupOf != d.containerID() {
		return
	}
	if err := d.lim.group.lift(d.lim.dev); err == nil {
		d.lim.applied = catalog.LimitSet{}
	}
}

// CheckDisk implements Limiter: the self-check thread joins the
// container's blkio cgroup and writes into the bind-mounted datadir.
func (d *Docker) CheckDisk(ctx context.Context, dur time.Duration) (DiskCheck, error) {
	g, err := d.containerGroup()
	if err != nil {
		return DiskCheck{}, err
	}
	return diskCheck(ctx, g, d.lim.dev, d.dir, d.lim.applied.DiskWriteIOPS, dur)
}

// Cgroup implements Limiter: a container always has its own cgroup (the
// engine's), limited or not, found from its server's host pid.
func (d *Docker) Cgroup() (CgroupPaths, bool) {
	g, err := d.containerGroup()
	if err != nil {
		return CgroupPaths{}, false
	}
	return g.paths(d.lim.dev, d.dir), true
}

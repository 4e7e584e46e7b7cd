package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	dc "github.com/ory/dockertest/v3/docker"

	"benchmatrix/catalog"
)

// What an image's server is, asked before any of its servers starts: a
// MySQL group on the docker provider needs MySQL 5.7.17+ and its
// group_replication plugin, and the image's name says neither for sure
// (mysql:latest, a private build). A throwaway container of the image
// (labelled like every container, its reaper running, removed on every
// path) runs a shell that asks the image's own server binary
// `mysqld --version` (mariadbd when there is no mysqld), reads the plugin
// directory from `mysqld --verbose --help` (what the official images' own
// documentation runs to list the options; the option files are read as the
// server will read them; if it names none, the official images' and
// Debian's directories, /usr/lib64/mysql/plugin or /usr/lib/mysql/plugin)
// and lists that directory. Nothing of the image is
// run but its server binary's help and the shell's ls: no datadir, no
// entrypoint, no network.

// DockerImage is what InspectDockerImage found in an image.
type DockerImage struct {
	Image string
	// Server is the image's server binary: Path is its name in the image
	// (mysqld or mariadbd), Flavor and Version from its --version.
	Server Binary
	// PluginDir is the server's plugin directory ("" when its --verbose
	// --help did not say and no usual one exists; PluginDirGuessed when
	// it did not say), Plugins the shared objects in it.
	PluginDir        string
	PluginDirGuessed bool
	Plugins          []string
}

// HasPlugin reports whether the plugin directory holds name (e.g.
// "group_replication.so").
func (i DockerImage) HasPlugin(name string) bool {
	for _, p := range i.Plugins {
		if p == name {
			return true
		}
	}
	return false
}

// dockerProbeScript prints the server binary's name, its --version line
// (its warnings left out: without a network MariaDB's warns), the plugin
// directory and its shared objects, one a line, each after its label;
// exit 3 when the image has no server binary.
const dockerProbeScript = `bin=
for b in mysqld mariadbd; do
	if command -v "$b" >/dev/null 2>&1; then bin=$b; break; fi
done
[ -n "$bin" ] || { echo "probe: no mysqld or mariadbd on PATH ($PATH)"; exit 3; }
echo "server: $bin"
echo "version: $("$bin" --version 2>/dev/null | head -n 1)"
dir=$("$bin" --verbose --help 2>/dev/null | awk '$1 == "plugin-dir" { print $2; exit }')
if [ -z "$dir" ]; then
	for d in /usr/lib64/mysql/plugin /usr/lib/mysql/plugin; do
		if [ -d "$d" ]; then dir=$d; echo "plugin-dir-guessed: yes"; break; fi
	done
fi
echo "plugin-dir: $dir"
if [ -n "$dir" ] && [ -d "$dir" ]; then
	for f in "$dir"/*.so; do [ -e "$f" ] && echo "plugin: ${f##*/}"; done
fi
exit 0`

// dockerProbeTimeoutTotal bounds the probe container's whole life.
const dockerProbeTimeoutTotal = 2 * time.Minute

// InspectDockerImage tells what server an image holds (see above). The
// image must be present (benchmatrix never pulls: *ImageMissingError).
func InspectDockerImage(ctx context.Context, image string) (_ DockerImage, err error) {
	if image == "" {
		image = catalog.DefaultDockerImage
	}
	repo, tag := splitImage(image)
	out := DockerImage{Image: repo + ":" + tag}
	pool, err := dockerPool(ctx)
	if err != nil {
		return out, err
	}
	if _, err := pool.Client.InspectImage(out.Image); errors.Is(err, dc.ErrNoSuchImage) {
		return out, &ImageMissingError{Image: out.Image}
	} else if err != nil {
		return out, fmt.Errorf("inspect docker image %s: %w", out.Image, err)
	}
	ctx, cancel := context.WithTimeout(ctx, dockerProbeTimeoutTotal)
	defer cancel()
	hostname, _ := os.Hostname()
	c, err := pool.Client.CreateContainer(dc.CreateContainerOptions{
		Name: fmt.Sprintf("benchmatrix-%d-probe-%d", os.Getpid(), dockerSeq.Add(1)),
		Config: &dc.Config{Image: out.Image, Entrypoint: []string{"/bin/sh", "-c", dockerProbeScript, "benchmatrix-probe"},
			Cmd: []string{}, User: "root",
			Labels: map[string]string{dockerLabelOwnerPID: strconv.Itoa(os.Getpid()), dockerLabelOwnerHost: hostname}},
		HostConfig: &dc.HostConfig{NetworkMode: "none", RestartPolicy: dc.RestartPolicy{Name: "no"}},
		Context:    ctx,
	})
	if err != nil {
		return out, fmt.Errorf("docker image %s: create a container to ask its server's version: %w", out.Image, err)
	}
	rp := startReaper(c.ID, "") // reaper.go: removed if benchmatrix dies meanwhile
	defer func() {
		rctx, rcancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer rcancel()
		rmErr := pool.Client.RemoveContainer(dc.RemoveContainerOptions{ID: c.ID, Force: true, RemoveVolumes: true, Context: rctx})
		if rmErr != nil && !removingElsewhere(rmErr) && err == nil {
			err = fmt.Errorf("remove docker container %s: %w", c.Name, rmErr)
		}
		rp.stop()
	}()
	if err := pool.Client.StartContainerWithContext(c.ID, nil, ctx); err != nil {
		return out, fmt.Errorf("docker image %s: start a container to ask its server's version: %w", out.Image, err)
	}
	code, err := pool.Client.WaitContainerWithContext(c.ID, ctx)
	if err != nil {
		return out, fmt.Errorf("docker image %s: the container asking its server's version did not end: %w", out.Image, err)
	}
	var buf bytes.Buffer
	_ = pool.Client.Logs(dc.LogsOptions{Context: ctx, Container: c.ID, OutputStream: &buf, ErrorStream: &buf, Stdout: true, Stderr: true})
	if code != 0 {
		return out, fmt.Errorf("docker image %s: asking its server's version failed (status %d): %s", out.Image, code, strings.TrimSpace(buf.String()))
	}
	return parseDockerProbe(out, buf.String())
}

// parseDockerProbe reads the probe's output.
func parseDockerProbe(img DockerImage, out string) (DockerImage, error) {
	var version string
	for line := range strings.Lines(out) {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "server: "):
			img.Server.Path = strings.TrimPrefix(line, "server: ")
		case line == "plugin-dir-guessed: yes":
			img.PluginDirGuessed = true
		case strings.HasPrefix(line, "plugin-dir: "):
			img.PluginDir = strings.TrimPrefix(line, "plugin-dir: ")
		case strings.HasPrefix(line, "plugin: "):
			img.Plugins = append(img.Plugins, strings.TrimPrefix(line, "plugin: "))
		case strings.HasPrefix(line, "version: "):
			version = strings.TrimPrefix(line, "version: ")
		}
	}
	f, v, err := catalog.ParseVersionLine(version)
	if err != nil {
		return img, fmt.Errorf("docker image %s: %s --version %w", img.Image, img.Server.Path, err)
	}
	img.Server.Flavor, img.Server.Version = f, v
	img.Server.Path = img.Server.Path + " in " + img.Image
	return img, nil
}

package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// DatadirSwapper is a Snapshotter whose snapshots can leave the run: the
// data cache across runs (package cache) reads a snapshot's directory, and
// fills a staging directory beside the datadir that then replaces it. It
// belongs to the snapshots capability (catalog.Snapshots); the sandbox has
// it, the Docker provider does not (its datadir lives in a container).
type DatadirSwapper interface {
	Snapshotter
	// SnapshotPath is the directory of the saved snapshot key (it is
	// never written again once saved; it may be hard-linked).
	SnapshotPath(key string) string
	// StagingDir is a path that does not exist, on the datadir's
	// filesystem, for a new datadir; it goes with the sandbox.
	StagingDir() (string, error)
	// SwapDatadir stops the server, replaces its datadir with dir (moved,
	// not copied) and starts the server with the given startup options.
	SwapDatadir(ctx context.Context, dir string, startup []Setting) error
}

var _ DatadirSwapper = (*Sandbox)(nil)

// SnapshotPath implements DatadirSwapper.
func (s *Sandbox) SnapshotPath(key string) string { return s.snapshotDir(key) }

// StagingDir implements DatadirSwapper.
func (s *Sandbox) StagingDir() (string, error) {
	p := filepath.Join(s.dir, "staging")
	if err := os.RemoveAll(p); err != nil {
		return "", err
	}
	return p, nil
}

// SwapDatadir implements DatadirSwapper.
func (s *Sandbox) SwapDatadir(ctx context.Context, dir string, startup []Setting) error {
	if filepath.Dir(dir) != s.dir {
		return fmt.Errorf("swap datadir: %s is not in the sandbox's directory", dir)
	}
	if err := s.terminate(2 * time.Minute); err != nil {
		return err
	}
	if err := os.RemoveAll(s.datadir()); err != nil {
		return err
	}
	if err := os.Rename(dir, s.datadir()); err != nil {
		return fmt.Errorf("swap datadir: %w", err)
	}
	return s.launch(ctx, startup)
}

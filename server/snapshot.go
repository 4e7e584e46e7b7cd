package server

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Snapshotter is a provider that can save its stopped datadir and start
// again from a saved copy: the prepared-data snapshot that lets later cells
// with the same data shape skip the load.
type Snapshotter interface {
	// Snapshot stops the server cleanly, copies the datadir under key and
	// starts the server again with the same options.
	Snapshot(ctx context.Context, key string) error
	// HasSnapshot reports whether key was saved.
	HasSnapshot(key string) bool
	// Restore stops the server, replaces the datadir with the copy saved
	// under key and starts the server with the given startup options.
	Restore(ctx context.Context, key string, startup []Setting) error
}

// LogReader is a provider whose error log can be read from an offset, so
// each cell can keep the lines written while it ran.
type LogReader interface {
	LogOffset() int64
	LogFrom(offset int64) string
}

var (
	_ Snapshotter = (*Sandbox)(nil)
	_ LogReader   = (*Sandbox)(nil)
)

func (s *Sandbox) snapshotDir(key string) string {
	return filepath.Join(s.dir, "snapshots", safeName(key))
}

func safeName(key string) string {
	var b strings.Builder
	for _, r := range key {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// Snapshot implements Snapshotter.
func (s *Sandbox) Snapshot(ctx context.Context, key string) error {
	if err := s.terminate(2 * time.Minute); err != nil {
		return err
	}
	dst := s.snapshotDir(key)
	_ = os.RemoveAll(dst)
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return err
	}
	if err := copyTree(ctx, s.datadir(), dst); err != nil {
		_ = os.RemoveAll(dst)
		return fmt.Errorf("snapshot datadir: %w", err)
	}
	return s.launch(ctx, s.startup)
}

// HasSnapshot implements Snapshotter.
func (s *Sandbox) HasSnapshot(key string) bool {
	st, err := os.Stat(s.snapshotDir(key))
	return err == nil && st.IsDir()
}

// Restore implements Snapshotter.
func (s *Sandbox) Restore(ctx context.Context, key string, startup []Setting) error {
	src := s.snapshotDir(key)
	if !s.HasSnapshot(key) {
		return fmt.Errorf("no snapshot %q", key)
	}
	if err := s.terminate(2 * time.Minute); err != nil {
		return err
	}
	if err := os.RemoveAll(s.datadir()); err != nil {
		return err
	}
	if err := copyTree(ctx, src, s.datadir()); err != nil {
		return fmt.Errorf("restore datadir: %w", err)
	}
	return s.launch(ctx, startup)
}

// copyTree copies a directory with cp -a, using reflinks where the
// filesystem has them.
func copyTree(ctx context.Context, src, dst string) error {
	out, err := exec.CommandContext(ctx, "cp", "-a", "--reflink=auto", src, dst).CombinedOutput()
	if err != nil {
		return fmt.Errorf("cp -a %s %s: %v: %s", src, dst, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// LogOffset implements LogReader.
func (s *Sandbox) LogOffset() int64 { return fileSize(s.errorLog()) }

// LogFrom implements LogReader: the error log from offset on (at most the
// last 200 lines).
func (s *Sandbox) LogFrom(offset int64) string { return readTailFrom(s.errorLog(), offset, 200) }

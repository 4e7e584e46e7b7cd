package cache

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// The check on restore: every file of the entry is copied through a
// CRC-32C (hardware-accelerated on amd64 and arm64), and the file list,
// sizes and checksums must be those recorded when the entry was written.
// Since a restore copies every byte anyway, checking all of them costs the
// checksum's CPU only, not another read; a sample (system files only, or
// CHECKSUM TABLE on some tables) would leave most of the data unchecked.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// CorruptError says an entry did not match what was recorded when it was
// written. The entry has been discarded.
type CorruptError struct {
	ID  string
	Why string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("cache entry %s is corrupt (%s); discarded", e.ID, e.Why)
}

// TooBigError says an entry alone is larger than the cache's limit.
type TooBigError struct{ Size, Limit int64 }

func (e *TooBigError) Error() string {
	return fmt.Sprintf("the data (%s) is larger than the cache's limit (%s); not cached", Bytes(e.Size), Bytes(e.Limit))
}

// Put stores a copy of the directory src under key, unless an entry for
// it exists already (another run may have filled it meanwhile: the first
// complete one wins, the other copy is dropped). Files are hard-linked when
// src is on the same filesystem (src must then never be written again:
// a snapshot), copied otherwise. Least recently used entries are evicted to
// keep the cache within its limit. It returns the entry's ID and whether
// this call stored it.
func (c *Cache) Put(ctx context.Context, key Key, src string) (id string, stored bool, err error) {
	id = key.ID()
	if c.Has(id) {
		return id, false, nil
	}
	size, err := treeSize(src)
	if err != nil {
		return id, false, fmt.Errorf("data cache: %w", err)
	}
	if size > c.limit {
		return id, false, &TooBigError{Size: size, Limit: c.limit}
	}
	tmp, err := os.MkdirTemp(filepath.Join(c.dir, "tmp"), "put-"+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return id, false, fmt.Errorf("data cache: %w", err)
	}
	defer os.RemoveAll(tmp)
	e := &Entry{ID: id, Key: key, Created: time.Now().UTC()}
	e.Key.Version = layoutVersion
	if e.Files, e.Size, err = copyTree(ctx, src, filepath.Join(tmp, "data"), nil, true); err != nil {
		return id, false, fmt.Errorf("data cache: %w", err)
	}
	b, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return id, false, err
	}
	if err := os.WriteFile(filepath.Join(tmp, "entry.json"), b, 0o600); err != nil {
		return id, false, fmt.Errorf("data cache: %w", err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "used"), nil, 0o600); err != nil {
		return id, false, fmt.Errorf("data cache: %w", err)
	}
	unlock, err := c.lock()
	if err != nil {
		return id, false, err
	}
	defer unlock()
	c.sweepTmp() // what killed writers left
	if c.Has(id) {
		return id, false, nil
	}
	if err := os.Rename(tmp, c.entryDir(id)); err != nil {
		return id, false, fmt.Errorf("data cache: %w", err)
	}
	if _, err := c.pruneLocked(0, id); err != nil {
		return id, true, err
	}
	return id, true, nil
}

// Restore copies entry id's datadir to dst (which must not exist),
// verifying every file on the way. An entry that does not match its record
// is discarded and a *CorruptError returned; dst is then removed. A
// missing entry is ErrNotFound.
func (c *Cache) Restore(ctx context.Context, id, dst string) (*Entry, error) {
	if !validID(id) {
		return nil, fmt.Errorf("%q: %w", id, ErrNotFound)
	}
	unlock, err := c.lock()
	if err != nil {
		return nil, err
	}
	dir := c.entryDir(id)
	f, err := os.Open(filepath.Join(dir, "entry.json"))
	if err != nil {
		unlock()
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", id, ErrNotFound)
		}
		return nil, fmt.Errorf("data cache: %w", err)
	}
	// Shared while copying: rm and eviction skip an entry in use.
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH)
	unlock()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("data cache: %w", err)
	}
	e, why := c.restore(ctx, id, dir, dst)
	f.Close()
	if err := ctx.Err(); err != nil {
		// Stopped, not damaged: the entry stays.
		_ = os.RemoveAll(dst)
		return nil, err
	}
	if why != "" {
		_ = os.RemoveAll(dst)
		if err := c.discard(id); err != nil {
			return nil, fmt.Errorf("cache entry %s is corrupt (%s); discarding it failed: %w", id, why, err)
		}
		return nil, &CorruptError{ID: id, Why: why}
	}
	touch(filepath.Join(dir, "used"))
	return e, nil
}

// restore copies and checks; a non-empty why says what did not match.
func (c *Cache) restore(ctx context.Context, id, dir, dst string) (*Entry, string) {
	e, err := readEntry(dir)
	if err != nil {
		return nil, "unreadable entry.json: " + err.Error()
	}
	if e.ID != id || e.Key.ID() != id {
		return nil, "entry.json does not describe this entry"
	}
	files, _, err := copyTree(ctx, filepath.Join(dir, "data"), dst, e.Files, false)
	if err != nil {
		return nil, err.Error()
	}
	if why := compareFiles(e.Files, files); why != "" {
		return nil, why
	}
	return e, ""
}

// compareFiles says how got differs from the record want, or "".
func compareFiles(want, got []File) string {
	w := map[string]File{}
	for _, f := range want {
		w[f.Path] = f
	}
	seen := map[string]bool{}
	for _, g := range got {
		f, ok := w[g.Path]
		switch {
		case !ok:
			return fmt.Sprintf("unexpected file %s", g.Path)
		case f.IsDir != g.IsDir:
			return fmt.Sprintf("%s: file or directory changed", g.Path)
		case f.Size != g.Size:
			return fmt.Sprintf("%s: %d bytes, recorded %d", g.Path, g.Size, f.Size)
		case f.CRC != g.CRC:
			return fmt.Sprintf("%s: checksum %08x, recorded %08x", g.Path, g.CRC, f.CRC)
		}
		seen[g.Path] = true
	}
	for _, f := range want {
		if !seen[f.Path] {
			return fmt.Sprintf("missing file %s", f.Path)
		}
	}
	return ""
}

// discard removes a corrupt entry, waiting for other readers (who will
// find it corrupt too) rather than leaving it.
func (c *Cache) discard(id string) error {
	for i := 0; ; i++ {
		unlock, err := c.lock()
		if err != nil {
			return err
		}
		err = c.removeLocked(id)
		unlock()
		var busy *BusyError
		if err == nil || errors.Is(err, fs.ErrNotExist) || !errors.As(err, &busy) || i >= 100 {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// treeSize is the total size of the regular files under dir.
func treeSize(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			n += info.Size()
		}
		return nil
	})
	return n, err
}

// copyTree copies the directory src to dst (which must not exist),
// returning every file and directory with its size and CRC-32C. With link,
// regular files are hard-linked where possible (and read for their
// checksum). With want (a restore), a file larger than recorded is not
// copied past its recorded size plus one byte, so a bad entry cannot
// fill the disk. Files are copied by copyWorkers at once, the largest
// first: a datadir is a few large tablespaces, and one copy stream does
// not keep both the page cache and the checksum busy.
func copyTree(ctx context.Context, src, dst string, want []File, link bool) ([]File, int64, error) {
	limits := map[string]int64{}
	for _, f := range want {
		limits[f.Path] = f.Size
	}
	type job struct {
		src, dst string
		f        File
		size     int64
	}
	var files []File
	var jobs []job
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		name := filepath.ToSlash(rel)
		switch {
		case d.IsDir():
			if err := os.Mkdir(target, info.Mode().Perm()|0o700); err != nil {
				return err
			}
			if rel != "." {
				files = append(files, File{Path: name, IsDir: true, Mode: uint32(info.Mode().Perm())})
			}
			return nil
		case !d.Type().IsRegular():
			return fmt.Errorf("%s: not a regular file or directory", name)
		}
		jobs = append(jobs, job{src: p, dst: target, f: File{Path: name, Mode: uint32(info.Mode().Perm())}, size: info.Size()})
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	sort.SliceStable(jobs, func(i, j int) bool { return jobs[i].size > jobs[j].size })
	var (
		mu    sync.Mutex
		first error
		total int64
		next  atomic.Int64
		wg    sync.WaitGroup
	)
	for range min(copyWorkers, max(len(jobs), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 1<<20)
			for {
				i := int(next.Add(1) - 1)
				if i >= len(jobs) {
					return
				}
				j := jobs[i]
				lim := int64(-1)
				if want != nil {
					lim = 0
					if l, ok := limits[j.f.Path]; ok {
						lim = l + 1
					}
				}
				f := j.f
				var err error
				if link && os.Link(j.src, j.dst) == nil {
					f.Size, f.CRC, err = checksum(ctx, j.src, buf)
				} else {
					f.Size, f.CRC, err = copyFile(ctx, j.src, j.dst, fs.FileMode(f.Mode), lim, buf)
				}
				mu.Lock()
				if err != nil && first == nil {
					first = err
				}
				total += f.Size
				files = append(files, f)
				mu.Unlock()
				if err != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files, total, first
}

// copyWorkers is how many files are copied at once.
const copyWorkers = 2

type crcWriter struct{ sum uint32 }

func (w *crcWriter) Write(p []byte) (int, error) {
	w.sum = crc32.Update(w.sum, castagnoli, p)
	return len(p), nil
}

func checksum(ctx context.Context, path string, buf []byte) (int64, uint32, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	var w crcWriter
	n, err := io.CopyBuffer(&w, ctxReader{ctx, f}, buf)
	return n, w.sum, err
}

// ctxReader stops a copy when ctx ends; it also hides WriteTo, so that
// io.CopyBuffer uses the buffer.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (r ctxReader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	return r.r.Read(p)
}

// copyFile copies src to dst and returns the checksum of what dst holds;
// limit >= 0 stops after that many bytes. The copy runs in the kernel
// (copy_file_range through os.File.ReadFrom: no pass through this
// process's memory, a clone where the filesystem can), in chunks so that a
// cancelled ctx stops it within one; the checksum then reads dst back,
// from the page cache. Measured on a 1.1 GiB datadir (4 x 1M rows): 0.3 s
// for the copy against 1.7 s through a user-space buffer and the checksum.
func copyFile(ctx context.Context, src, dst string, mode fs.FileMode, limit int64, buf []byte) (int64, uint32, error) {
	in, err := os.Open(src)
	if err != nil {
		return 0, 0, err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode|0o600)
	if err != nil {
		return 0, 0, err
	}
	var n int64
	for limit < 0 || n < limit {
		if err = ctx.Err(); err != nil {
			break
		}
		chunk := int64(copyChunk)
		if limit >= 0 {
			chunk = min(chunk, limit-n)
		}
		var m int64
		m, err = io.CopyN(out, in, chunk)
		n += m
		if err == io.EOF {
			err = nil
			break
		}
		if err != nil {
			break
		}
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return n, 0, err
	}
	got, sum, err := checksum(ctx, dst, buf)
	if err == nil && got != n {
		err = fmt.Errorf("%s: %d bytes copied, %d read back", dst, n, got)
	}
	return n, sum, err
}

// copyChunk is how much copyFile copies between two looks at its ctx.
const copyChunk = 64 << 20

// Bytes formats a size for people: 1.5 GiB, 300 MiB.
func Bytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.0f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

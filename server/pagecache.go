package server

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/unix"

	"benchmatrix/record/parts"
)

// CacheDropper is a provider that can drop its server's files from the OS
// page cache, for a cold start that the page cache does not serve: InnoDB
// reads its data files with O_DIRECT (innodb_flush_method = O_DIRECT, the
// default of MariaDB 10.6+) and bypasses the page cache, but MyISAM reads
// its data through it, so that a restarted server would find its data in
// memory still. Only the files of a datadir the provider created are
// touched.
type CacheDropper interface {
	DropPageCache(ctx context.Context) (parts.DropResult, error)
}

var _ CacheDropper = (*Sandbox)(nil)

// DropPageCache implements CacheDropper: every regular file under the
// sandbox's datadir (which it created) is written back (fdatasync: dirty
// pages cannot be dropped) and dropped (posix_fadvise POSIX_FADV_DONTNEED);
// the bytes in the page cache before and after are counted with mincore.
func (s *Sandbox) DropPageCache(ctx context.Context) (parts.DropResult, error) {
	return dropPageCache(ctx, s.datadir())
}

func dropPageCache(ctx context.Context, dir string) (parts.DropResult, error) {
	var res parts.DropResult
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return nil // a file the server removed meanwhile
			}
			return err
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		if !d.Type().IsRegular() {
			return nil
		}
		before, after, err := dropFile(p)
		if err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		res.Files++
		res.CachedBefore += before
		res.CachedAfter += after
		return nil
	})
	return res, err
}

// dropFile drops one file's pages from the page cache and returns how many
// of its bytes were cached before and after.
func dropFile(p string) (before, after int64, err error) {
	f, err := os.Open(p)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, 0, err
	}
	size := st.Size()
	if size == 0 {
		return 0, 0, nil
	}
	fd := int(f.Fd())
	before = residentBytes(fd, size)
	// Dirty pages are not dropped: write them back first. fdatasync on a
	// descriptor opened read-only is allowed, and changes nothing in the
	// file.
	if err := unix.Fdatasync(fd); err != nil {
		return before, before, &os.PathError{Op: "fdatasync", Path: p, Err: err}
	}
	if err := unix.Fadvise(fd, 0, 0, unix.FADV_DONTNEED); err != nil {
		return before, before, &os.PathError{Op: "posix_fadvise", Path: p, Err: err}
	}
	return before, residentBytes(fd, size), nil
}

// residentBytes counts the bytes of a file in the page cache (mincore on a
// read-only shared mapping, which reads nothing); -1 is never returned:
// a file that cannot be mapped counts 0.
func residentBytes(fd int, size int64) int64 {
	if size <= 0 || int64(int(size)) != size {
		return 0
	}
	m, err := unix.Mmap(fd, 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return 0
	}
	defer unix.Munmap(m)
	page := int64(os.Getpagesize())
	vec := make([]byte, (size+page-1)/page)
	if _, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		return 0
	}
	var n int64
	for i, v := range vec {
		if v&1 == 0 {
			continue
		}
		if i == len(vec)-1 {
			n += size - int64(i)*page
		} else {
			n += page
		}
	}
	return n
}

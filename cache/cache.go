// Package cache keeps prepared data across runs: stopped datadirs of a
// sandbox, each under the key of everything that determined its data
// (server binary and version, data shape, seed rule, on-disk format
// variables), with a size limit and least-recently-used eviction.
//
// Layout of a cache directory:
//
//	lock                  flock: held exclusively while entries are added or removed
//	entries/ID/entry.json the key, the file list with sizes and CRC-32C checksums
//	entries/ID/data/      the datadir
//	entries/ID/used       its modification time is the entry's last use
//	tmp/                  entries being written, and entries being removed
//
// An entry appears by a rename of a complete directory, so a reader never
// sees half of one; a reader holds a shared flock on the entry's
// entry.json while it copies, and eviction and rm skip an entry in use.
// Every restore recomputes the checksums of what it copies: an entry that
// does not match (a truncated or altered file, a missing or extra one) is
// discarded and never used.
package cache

import (
	"benchmatrix/stale"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// DefaultLimit is the cache's size limit when the manifest gives none.
const DefaultLimit int64 = 20 << 30

// Off is the [server] cache value that disables the cache.
const Off = "off"

// EnvVar, when set, is the cache directory (or "off") of manifests that
// name none: test suites and CI set it to keep runs away from the user's
// cache.
const EnvVar = "BENCHMATRIX_DATA_CACHE"

// DefaultDir is $BENCHMATRIX_DATA_CACHE (a directory, or "off"), else
// $XDG_CACHE_HOME/benchmatrix, else ~/.cache/benchmatrix.
func DefaultDir() (string, error) {
	if e := os.Getenv(EnvVar); e != "" {
		if strings.EqualFold(e, Off) {
			return Off, nil
		}
		return e, nil
	}
	if x := os.Getenv("XDG_CACHE_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "benchmatrix"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory: neither $XDG_CACHE_HOME nor $HOME is set (give [server] cache = \"DIR\" or \"off\")")
	}
	return filepath.Join(home, ".cache", "benchmatrix"), nil
}

// Key is everything that determines an entry's data. Its ID is a hash of
// all of it; Summary is a short human description.
type Key struct {
	Binary  string            `json:"binary"`  // server binary path
	Server  string            `json:"server"`  // flavor and version
	Stamp   string            `json:"stamp"`   // the binary's size and modification time
	Schema  string            `json:"schema"`  // the database the tables live in
	Shape   string            `json:"shape"`   // oltp.DataShape
	Seed    string            `json:"seed"`    // the seed rule of the load
	Dist    string            `json:"dist"`    // the distribution k is drawn from
	Format  map[string]string `json:"format"`  // on-disk format variables, as in effect
	Version int               `json:"version"` // of this layout
}

// layoutVersion changes when what an entry holds changes meaning.
const layoutVersion = 1

// ID is the entry's name: 16 hex digits of a SHA-256 of the whole key.
func (k Key) ID() string {
	k.Version = layoutVersion
	b, _ := json.Marshal(k) // map keys are sorted: canonical
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// Summary is one line for `cache ls`.
func (k Key) Summary() string {
	out := k.Server
	if k.Schema != "" {
		out += " " + k.Schema
	}
	out += "; " + k.Shape
	if k.Seed != "" {
		out += "; seed " + k.Seed
	}
	return out
}

// File is one file of an entry's datadir.
type File struct {
	Path  string `json:"path"` // relative, slash-separated
	Size  int64  `json:"size"`
	CRC   uint32 `json:"crc32c"`
	Mode  uint32 `json:"mode"`
	IsDir bool   `json:"dir,omitempty"`
}

// Entry is what entry.json holds.
type Entry struct {
	ID      string    `json:"id"`
	Key     Key       `json:"key"`
	Created time.Time `json:"created"`
	Size    int64     `json:"size"` // bytes of data
	Files   []File    `json:"files"`
	// LastUse is the used file's modification time (not stored).
	LastUse time.Time `json:"-"`
}

// Cache is an open cache directory.
type Cache struct {
	dir   string
	limit int64
}

// Open opens (creating) the cache directory dir with a size limit in
// bytes (0 means DefaultLimit).
func Open(dir string, limit int64) (*Cache, error) {
	if limit <= 0 {
		limit = DefaultLimit
	}
	for _, d := range []string{dir, filepath.Join(dir, "entries"), filepath.Join(dir, "tmp")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("data cache: %w", err)
		}
	}
	return &Cache{dir: dir, limit: limit}, nil
}

// Dir is the cache directory.
func (c *Cache) Dir() string { return c.dir }

// Limit is the size limit in bytes.
func (c *Cache) Limit() int64 { return c.limit }

func (c *Cache) entryDir(id string) string { return filepath.Join(c.dir, "entries", id) }

// lock takes the cache's exclusive lock, waiting for it.
func (c *Cache) lock() (func(), error) {
	f, err := os.OpenFile(filepath.Join(c.dir, "lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("data cache lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("data cache lock: %w", err)
	}
	return func() { f.Close() }, nil
}

// validID: entry names are hex digits only, so that rm cannot be given a
// path.
func validID(id string) bool {
	if len(id) == 0 || len(id) > 64 {
		return false
	}
	for _, r := range id {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
			return false
		}
	}
	return true
}

func readEntry(dir string) (*Entry, error) {
	b, err := os.ReadFile(filepath.Join(dir, "entry.json"))
	if err != nil {
		return nil, err
	}
	var e Entry
	if err := json.Unmarshal(b, &e); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "entry.json"), err)
	}
	if st, err := os.Stat(filepath.Join(dir, "used")); err == nil {
		e.LastUse = st.ModTime()
	} else {
		e.LastUse = e.Created
	}
	return &e, nil
}

// List returns the entries, the most recently used first. Entries whose
// entry.json cannot be read are listed with their ID only.
func (c *Cache) List() ([]*Entry, error) {
	ents, err := os.ReadDir(filepath.Join(c.dir, "entries"))
	if err != nil {
		return nil, fmt.Errorf("data cache: %w", err)
	}
	var out []*Entry
	for _, d := range ents {
		if !d.IsDir() || !validID(d.Name()) {
			continue
		}
		e, err := readEntry(c.entryDir(d.Name()))
		if err != nil {
			e = &Entry{ID: d.Name()}
			if st, err := os.Stat(c.entryDir(d.Name())); err == nil {
				e.LastUse = st.ModTime()
			}
		}
		e.ID = d.Name()
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].LastUse.After(out[j].LastUse) })
	return out, nil
}

// Has reports whether an entry exists for id.
func (c *Cache) Has(id string) bool {
	_, err := os.Stat(filepath.Join(c.entryDir(id), "entry.json"))
	return err == nil
}

// BusyError says an entry is being read by another run.
type BusyError struct{ ID string }

func (e *BusyError) Error() string {
	return fmt.Sprintf("cache entry %s is in use by another run", e.ID)
}

// ErrNotFound says there is no such entry.
var ErrNotFound = errors.New("no such cache entry")

// ErrBadID is the error for a string that cannot be a cache entry id.
var ErrBadID = errors.New("not a cache entry id (see `benchmatrix cache ls`)")

// Remove deletes entry id unless another run is reading it.
func (c *Cache) Remove(id string) error {
	if !validID(id) {
		return fmt.Errorf("%q: %w", id, ErrBadID)
	}
	unlock, err := c.lock()
	if err != nil {
		return err
	}
	defer unlock()
	if _, err := os.Stat(c.entryDir(id)); err != nil {
		return fmt.Errorf("%s: %w", id, ErrNotFound)
	}
	return c.removeLocked(id)
}

// removeLocked removes an entry under the cache lock: it takes the entry's
// own lock without waiting (a reader holds it shared), moves the entry
// away in one rename, then deletes it.
func (c *Cache) removeLocked(id string) error {
	dir := c.entryDir(id)
	f, err := os.Open(filepath.Join(dir, "entry.json"))
	if err == nil {
		defer f.Close()
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			return &BusyError{ID: id}
		}
	}
	trash, err := os.MkdirTemp(filepath.Join(c.dir, "tmp"), "rm-"+id+"-")
	if err != nil {
		return fmt.Errorf("data cache: %w", err)
	}
	if err := os.Rename(dir, filepath.Join(trash, "entry")); err != nil {
		_ = os.Remove(trash)
		return fmt.Errorf("data cache: remove %s: %w", id, err)
	}
	return os.RemoveAll(trash)
}

// Prune evicts the least recently used entries until the cache holds at
// most limit bytes (0: the cache's own limit; below 0: nothing), skipping
// entries in use and keep (an entry just written). It returns the evicted
// entries.
func (c *Cache) Prune(limit int64, keep string) ([]*Entry, error) {
	unlock, err := c.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	c.sweepTmp()
	return c.pruneLocked(limit, keep)
}

func (c *Cache) pruneLocked(limit int64, keep string) ([]*Entry, error) {
	if limit == 0 {
		limit = c.limit
	}
	all, err := c.List()
	if err != nil {
		return nil, err
	}
	var evicted []*Entry
	for _, v := range Victims(all, limit, keep) {
		if err := c.removeLocked(v.ID); err != nil {
			var busy *BusyError
			if errors.As(err, &busy) {
				continue
			}
			return evicted, err
		}
		evicted = append(evicted, v)
	}
	return evicted, nil
}

// Victims is the LRU policy, a pure function: from entries (any order),
// the least recently used ones whose removal brings the total size to at
// most limit (all of them for a limit below 0), never keep.
func Victims(entries []*Entry, limit int64, keep string) []*Entry {
	byAge := append([]*Entry(nil), entries...)
	sort.SliceStable(byAge, func(i, j int) bool { return byAge[i].LastUse.Before(byAge[j].LastUse) })
	var total int64
	for _, e := range byAge {
		total += e.Size
	}
	var out []*Entry
	for _, e := range byAge {
		if limit >= 0 && total <= limit {
			break
		}
		if e.ID == keep {
			continue
		}
		out = append(out, e)
		total -= e.Size
	}
	return out
}

// sweepTmp removes what dead writers left in tmp/ (names carry the pid).
func (c *Cache) sweepTmp() {
	ents, err := os.ReadDir(filepath.Join(c.dir, "tmp"))
	if err != nil {
		return
	}
	for _, e := range ents {
		parts := strings.Split(e.Name(), "-")
		if len(parts) < 3 || parts[0] != "put" {
			if strings.HasPrefix(e.Name(), "rm-") {
				_ = os.RemoveAll(filepath.Join(c.dir, "tmp", e.Name()))
			}
			continue
		}
		pid, err := strconv.Atoi(parts[1])
		if err != nil || !stale.Gone(pid) {
			continue
		}
		_ = os.RemoveAll(filepath.Join(c.dir, "tmp", e.Name()))
	}
}

func touch(path string) {
	now := time.Now()
	if err := os.Chtimes(path, now, now); err != nil {
		if f, err := os.Create(path); err == nil {
			f.Close()
		}
	}
}

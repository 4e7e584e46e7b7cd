package k8s

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// A shard directory travels on the pod's log (kubectl logs merges stdout
// and stderr, so raw bytes would not survive) as a gzipped tar in base64
// lines between two marker lines; the end marker carries the archive's
// sha256 and size:
//
//	==== benchmatrix shard 2/3 begin (tar.gz, base64) ====
//	H4sIAAAAAAAA/+x9...
//	==== benchmatrix shard 2/3 end sha256=... bytes=... ====
//
// Lines may carry a prefix (kubectl logs --prefix); the lines of several
// pods may interleave (kubectl logs -f -l ...): a block's lines are those
// with its begin line's prefix.

var (
	beginRE = regexp.MustCompile(`^(.*)==== benchmatrix shard (\d+)/(\d+) begin \(tar\.gz, base64\) ====\s*$`)
	endRE   = regexp.MustCompile(`^(.*)==== benchmatrix shard (\d+)/(\d+) end sha256=([0-9a-f]{64}) bytes=(\d+) ====\s*$`)
)

// WriteShard writes dir (a shard run's results directory) to w as a framed
// archive of shard k of n.
func WriteShard(w io.Writer, k, n int, dir string) error {
	var arch bytes.Buffer
	if err := tarDir(&arch, dir); err != nil {
		return err
	}
	sum := sha256.Sum256(arch.Bytes())
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "==== benchmatrix shard %d/%d begin (tar.gz, base64) ====\n", k, n)
	enc := base64.StdEncoding.EncodeToString(arch.Bytes())
	for len(enc) > 0 {
		l := min(len(enc), 76)
		bw.WriteString(enc[:l])
		bw.WriteByte('\n')
		enc = enc[l:]
	}
	fmt.Fprintf(bw, "==== benchmatrix shard %d/%d end sha256=%s bytes=%d ====\n", k, n, hex.EncodeToString(sum[:]), arch.Len())
	return bw.Flush()
}

// tarDir writes the regular files under dir (not the lock) as a gzipped
// tar with relative names.
func tarDir(w io.Writer, dir string) error {
	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if rel == "." || d.Name() == ".lock" || !(d.IsDir() || d.Type().IsRegular()) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		h, err := tar.FileInfoHeader(info, "")
		if err != nil {
			return err
		}
		h.Name = filepath.ToSlash(rel)
		if d.IsDir() {
			h.Name += "/"
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(tw, f)
		return err
	})
	if err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

// Shard is one shard's archive found in a log.
type Shard struct {
	K, N    int
	Archive []byte // tar.gz
}

// Collect reads logs and returns every complete, checksummed shard archive
// in them, by shard number. A block cut short or whose checksum fails is
// an error naming the shard; a shard found twice with the same content
// counts once.
func Collect(r io.Reader) ([]Shard, error) {
	type open struct {
		k, n int
		b    strings.Builder
	}
	blocks := map[string]*open{} // by line prefix
	found := map[int]Shard{}
	var problems []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := beginRE.FindStringSubmatch(line); m != nil {
			k, _ := strconv.Atoi(m[2])
			n, _ := strconv.Atoi(m[3])
			blocks[m[1]] = &open{k: k, n: n}
			continue
		}
		if m := endRE.FindStringSubmatch(line); m != nil {
			o := blocks[m[1]]
			delete(blocks, m[1])
			k, _ := strconv.Atoi(m[2])
			if o == nil || o.k != k {
				problems = append(problems, fmt.Sprintf("shard %s/%s: end without its begin", m[2], m[3]))
				continue
			}
			arch, err := base64.StdEncoding.DecodeString(o.b.String())
			sum := sha256.Sum256(arch)
			size, _ := strconv.Atoi(m[5])
			switch {
			case err != nil:
				problems = append(problems, fmt.Sprintf("shard %d/%d: %v", o.k, o.n, err))
			case hex.EncodeToString(sum[:]) != m[4] || len(arch) != size:
				problems = append(problems, fmt.Sprintf("shard %d/%d: checksum or size differs: the log lost or changed lines", o.k, o.n))
			default:
				if prev, dup := found[o.k]; dup && !bytes.Equal(prev.Archive, arch) {
					problems = append(problems, fmt.Sprintf("shard %d/%d appears twice with different results (a pod that ran again?)", o.k, o.n))
				}
				found[o.k] = Shard{K: o.k, N: o.n, Archive: arch}
			}
			continue
		}
		for prefix, o := range blocks {
			if strings.HasPrefix(line, prefix) {
				data := strings.TrimSpace(line[len(prefix):])
				if data != "" && !strings.ContainsAny(data, " \t") {
					o.b.WriteString(data)
				}
				break
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for _, o := range blocks {
		problems = append(problems, fmt.Sprintf("shard %d/%d: the log ends inside its archive", o.k, o.n))
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return nil, fmt.Errorf("k8s collect: %s", strings.Join(problems, "; "))
	}
	out := make([]Shard, 0, len(found))
	for _, s := range found {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].K < out[j].K })
	return out, nil
}

// Extract unpacks a shard archive into dir (which must not exist yet),
// refusing names that leave it.
func (s Shard) Extract(dir string) error {
	if _, err := os.Stat(dir); err == nil {
		return fmt.Errorf("%s exists already", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	gz, err := gzip.NewReader(bytes.NewReader(s.Archive))
	if err != nil {
		return err
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		name := filepath.FromSlash(h.Name)
		if !filepath.IsLocal(name) {
			return fmt.Errorf("shard %d/%d: archive entry %q leaves the directory", s.K, s.N, h.Name)
		}
		p := filepath.Join(dir, name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		}
	}
}

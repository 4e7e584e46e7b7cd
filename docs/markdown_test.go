// Package docs_test checks the manual: README.md (the front page) and the
// pages of docs/. Every manifest in them parses with the strict decoder and
// resolves, every relative link and #anchor leads somewhere, every section
// of the README the manual grew out of is still a heading, and the
// five-minute tour's commands run (tour_test.go).
package docs_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// root is the repository, seen from this package's directory.
const root = ".."

// page is one markdown file of the manual.
type page struct {
	path  string // relative to root, e.g. "docs/manifest.md"
	lines []string
}

// block is a fenced code block: its info string (```toml fragment → "toml
// fragment"), its text and the line its fence opens on.
type block struct {
	info string
	text string
	line int
}

// heading is a markdown heading outside code blocks.
type heading struct {
	level int
	text  string
	line  int
}

// pages reads README.md and every docs/*.md.
func pages(t *testing.T) []page {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{filepath.Join(root, "README.md")}, files...)
	var ps []page
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, err := filepath.Rel(root, f)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, page{path: filepath.ToSlash(rel), lines: strings.Split(string(b), "\n")})
	}
	if len(ps) < 10 {
		t.Fatalf("found %d pages of the manual; want README.md and docs/*.md", len(ps))
	}
	return ps
}

// scan walks a page's lines, telling code-block lines from prose.
func (p page) scan(prose func(i int, line string), code func(b block)) {
	var cur *block
	var text []string
	for i, l := range p.lines {
		if strings.HasPrefix(l, "```") {
			if cur == nil {
				cur = &block{info: strings.TrimSpace(strings.TrimPrefix(l, "```")), line: i + 1}
				text = nil
			} else {
				cur.text = strings.Join(text, "\n") + "\n"
				if code != nil {
					code(*cur)
				}
				cur = nil
			}
			continue
		}
		if cur != nil {
			text = append(text, l)
		} else if prose != nil {
			prose(i, l)
		}
	}
}

func (p page) blocks() []block {
	var bs []block
	p.scan(nil, func(b block) { bs = append(bs, b) })
	return bs
}

var headingRE = regexp.MustCompile(`^(#{1,6}) +(.+?) *#*$`)

func (p page) headings() []heading {
	var hs []heading
	p.scan(func(i int, l string) {
		if m := headingRE.FindStringSubmatch(l); m != nil {
			hs = append(hs, heading{level: len(m[1]), text: m[2], line: i + 1})
		}
	}, nil)
	return hs
}

// anchors are the #fragments GitHub gives a page's headings: lower case,
// punctuation dropped, spaces made hyphens, a repeated one numbered.
func (p page) anchors() map[string]bool {
	seen := map[string]int{}
	out := map[string]bool{}
	for _, h := range p.headings() {
		a := slug(h.text)
		if n := seen[a]; n > 0 {
			out[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

func slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"Data cache": "data-cache",
		"Docker Swarm: `benchmatrix swarm MANIFEST --shards N -o DIR`":                "docker-swarm-benchmatrix-swarm-manifest---shards-n--o-dir",
		"Your own metrics: `[[observe.metric]]`":                                      "your-own-metrics-observemetric",
		"warmup.toml (full length: 30 s cells, 3 repeats, machine = \"small-cloud\")": "warmuptoml-full-length-30-s-cells-3-repeats-machine--small-cloud",
		"Servers: sandbox, Docker, external":                                          "servers-sandbox-docker-external",
	} {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
}

var (
	linkRE       = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	inlineCodeRE = regexp.MustCompile("`[^`]*`")
)

// TestLinksResolve: every relative link of the manual names a file or
// directory of the repository, and every #anchor a heading of its page.
func TestLinksResolve(t *testing.T) {
	ps := pages(t)
	anchors := map[string]map[string]bool{}
	for _, p := range ps {
		anchors[p.path] = p.anchors()
	}
	checked := 0
	for _, p := range ps {
		p.scan(func(i int, l string) {
			for _, m := range linkRE.FindAllStringSubmatch(inlineCodeRE.ReplaceAllString(l, ""), -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				checked++
				where := fmt.Sprintf("%s:%d: link %q", p.path, i+1, target)
				file, frag, _ := strings.Cut(target, "#")
				dest := p.path
				if file != "" {
					dest = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(p.path), file)))
					if _, err := os.Stat(filepath.Join(root, dest)); err != nil {
						t.Errorf("%s: no such file: %v", where, err)
						continue
					}
				}
				if frag == "" {
					continue
				}
				as, ok := anchors[dest]
				if !ok {
					t.Errorf("%s: an anchor into %s, which is not a page of the manual", where, dest)
				} else if !as[frag] {
					t.Errorf("%s: %s has no heading with the anchor #%s", where, dest, frag)
				}
			}
		}, nil)
	}
	if checked < 50 {
		t.Errorf("checked %d links; the manual links its pages to each other far more", checked)
	}
}

// oldTitles are the section titles of the README the manual was cut from
// (git show 84b8849:README.md | grep '^##'): each one is still a heading,
// so a reader who knew it finds it.
var oldTitles = []string{
	"The two commands",
	"Commands",
	"Servers: sandbox, Docker, external",
	"Data cache",
	"Measured",
	"What bounds prepare: the server-bound ceiling",
	"Machines on demand: slow disks, small servers, isolated CPUs",
	"Docker",
	"What a disk limit does and does not throttle (cgroup v1)",
	"Observed inside the limits",
	"Limits in summary.md and the fingerprint",
	"CPU isolation: measured, not made the default",
	"The shipped manifests under the presets",
	"autoinc-growth.toml (full length: 60 s cells)",
	`warmup.toml (full length: 30 s cells, 3 repeats, machine = "small-cloud")`,
	"Topologies: replicas, semi-sync and Galera",
	"A topology you already run (provider external, one DSN per node)",
	"Per node, per second: node-prefixed columns",
	"Your own metrics: `[[observe.metric]]`",
	"Node faults: `[[events]]`",
	"The stall report sees the cluster",
	"Lifecycle and safety",
	"Replication topologies measured (manifests/replication.toml)",
	"On Docker: one container per node on a private network",
	"Measured on Docker (manifests/replication.toml, provider docker)",
	"The manifest language",
	"Results directory",
	"Conclusion: how sure, why, and what undermines it",
	"Explaining the numbers",
	"Where the time goes: server profiles per cell",
	"manifests/flush-profile.toml, measured",
	"Comparing runs",
	"Beyond one machine: shards and merge",
	"How a plan is cut: `plan --shards N`",
	"One shard: `run MANIFEST --shard K/N -o DIR`",
	"Merging: `merge -o OUT DIR...`",
	"How the machines count in the Conclusion and in `compare`",
	"Docker Swarm: `benchmatrix swarm MANIFEST --shards N -o DIR`",
	"Kubernetes: `benchmatrix k8s MANIFEST --shards N --image IMG`",
	"CI matrices: GitHub Actions",
	"Measured: 12 cells as 1 shard vs 3 Swarm tasks on this 2-core machine",
	"The OLTP engine",
	"mysqlslap: `benchmatrix slap` and the slap workload",
	"The slap workload in manifests",
	"The flush-policy question with mysqlslap",
	"Bad input and faults",
	"Shipped manifests",
	"Architecture",
	"Development",
}

func TestOldSectionsAreHeadings(t *testing.T) {
	var all []string
	for _, p := range pages(t) {
		for _, h := range p.headings() {
			all = append(all, h.text)
		}
	}
	for _, title := range oldTitles {
		if !slices.Contains(all, title) {
			t.Errorf("the old README's section %q is no heading of README.md or docs/", title)
		}
	}
}

// TestEveryPageLinkedFromTheFrontPage: README.md reaches every page of docs/.
func TestEveryPageLinkedFromTheFrontPage(t *testing.T) {
	ps := pages(t)
	front := strings.Join(ps[0].lines, "\n")
	for _, p := range ps[1:] {
		if !strings.Contains(front, "("+p.path+")") && !strings.Contains(front, "("+p.path+"#") {
			t.Errorf("README.md does not link %s", p.path)
		}
	}
	if n := len(ps[0].lines); n > 300 {
		t.Errorf("README.md has %d lines: the front page stays under 300, the manual is docs/", n)
	}
}

package docs_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"benchmatrix/experiment"
)

// fragmentBase is what a ```toml fragment is pasted into: the sections it
// does not write itself, so that the whole is a manifest.
var fragmentBase = []struct{ section, text string }{
	{"[experiment]", "[experiment]\nname = \"docs\"\n"},
	{"[workload]", "[workload]\nname = \"oltp_insert\"\ntable_size = 1000\n"},
}

var tableRE = regexp.MustCompile(`(?m)^\s*\[`)

// wrap makes a fragment whole: the base's sections it lacks, then the
// fragment, whose line numbers the error messages then shift by the
// base's length (reported back on the page's line).
func wrap(fragment string) (string, int) {
	var b strings.Builder
	for _, s := range fragmentBase {
		if !strings.Contains(fragment, "\n"+s.section) && !strings.HasPrefix(fragment, s.section) {
			b.WriteString(s.text)
		}
	}
	return b.String() + fragment, strings.Count(b.String(), "\n")
}

// TestManifestExamplesParse: every ```toml block of the manual is a
// manifest the strict decoder takes and Resolve expands into a plan
// (values, names and the matrix checked, as `benchmatrix plan` does);
// a ```toml fragment is checked pasted into a minimal manifest.
func TestManifestExamplesParse(t *testing.T) {
	n := 0
	for _, p := range pages(t) {
		for _, b := range p.blocks() {
			kind, _, _ := strings.Cut(b.info, " ")
			if kind != "toml" {
				continue
			}
			n++
			src, shift := b.text, 0
			switch b.info {
			case "toml":
				if !tableRE.MatchString(src) {
					t.Errorf("%s:%d: a ```toml block without a [section]: mark it ```toml fragment", p.path, b.line)
				}
			case "toml fragment":
				src, shift = wrap(src)
			default:
				t.Errorf("%s:%d: info string %q: want toml or toml fragment", p.path, b.line, b.info)
				continue
			}
			name := fmt.Sprintf("%s:%d", p.path, b.line)
			m, err := experiment.Parse(name+".toml", src)
			if err == nil {
				_, err = experiment.Resolve(m, experiment.Flags{})
			}
			if err != nil {
				t.Errorf("%s (the fence's line; lines below counted from the block's first line + %d): %v", name, shift, err)
			}
		}
	}
	if n < 8 {
		t.Errorf("found %d toml blocks; the manual has more (manifest, data cache, topologies, metrics, events, ...)", n)
	}
}

// TestFragmentsAreChecked: the wrapping does not hide a broken fragment.
func TestFragmentsAreChecked(t *testing.T) {
	for _, bad := range []string{
		"[server]\ncache_size = \"lots\"\n",
		"[topology]\nkind = \"ring\"\n",
		"[[observe.metric]]\nname = \"x\"\nkindd = \"gauge\"\n",
	} {
		src, _ := wrap(bad)
		m, err := experiment.Parse("bad.toml", src)
		if err == nil {
			_, err = experiment.Resolve(m, experiment.Flags{})
		}
		if err == nil {
			t.Errorf("fragment %q accepted", bad)
		}
	}
	src, _ := wrap("[workload]\nname = \"oltp_point_select\"\n")
	if strings.Count(src, "[workload]") != 1 {
		t.Errorf("a fragment's own [workload] was doubled:\n%s", src)
	}
}

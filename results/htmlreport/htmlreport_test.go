package htmlreport

import (
	"bytes"
	"errors"
	"math"
	"regexp"
	"strings"
	"testing"
)

func TestMarkdown(t *testing.T) {
	cases := []struct {
		name, md string
		want     []string // substrings of the HTML, in order
		not      []string
	}{
		{"heading and paragraph", "## Conclusion\n\n**Nothing** can be `concluded`.\nSecond line.",
			[]string{`<h2 id="conclusion">Conclusion</h2>`, "<p><strong>Nothing</strong> can be <code>concluded</code>.\nSecond line.</p>"}, nil},
		{"table with alignment and an escaped pipe", "| cell | tps |\n|:---|---:|\n| a\\|b | 1.0 |\n| c | 2.0 |",
			[]string{`<th title="click to sort">cell</th>`, `<th class="right" title="click to sort">tps</th>`, `<td>a|b</td><td class="right">1.0</td>`, `<td>c</td>`}, nil},
		{"a key-value table has no header row", "| | |\n|---|---|\n| server | mariadb |",
			[]string{`<tbody>`, `<td>server</td><td>mariadb</td>`}, []string{"<thead>"}},
		{"nested list with a fence", "- **a** (repeat 1): failed\n\n  ```\n  log line <1>\n  ```\n- b\n  - b.1\n  - b.2\n",
			[]string{"<ul>\n<li><strong>a</strong> (repeat 1): failed", "<pre><code>log line &lt;1&gt;</code></pre>", "<li>b\n<ul>\n<li>b.1</li>\n<li>b.2</li>\n</ul>"}, nil},
		{"links, images as links, escapes", `[svg](profiles/a/cpu.svg) ![tps](plots/tps.png) \*not bold\* a\_b`,
			[]string{`<a href="profiles/a/cpu.svg">svg</a>`, `<a href="plots/tps.png">figure: tps</a>`, "*not bold* a_b"}, []string{"<img"}},
		{"markup in text is text", `<script>alert(1)</script> & [x](javascript:alert(1))`,
			[]string{"&lt;script&gt;alert(1)&lt;/script&gt; &amp;", `<a href="#">x</a>`}, []string{"<script", "javascript:"}},
		{"an unclosed bold stays text", "2 ** 3",
			[]string{"2 ** 3"}, []string{"<strong>"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Markdown(c.md)
			at := 0
			for _, w := range c.want {
				i := strings.Index(got[at:], w)
				if i < 0 {
					t.Fatalf("want %q after offset %d in\n%s", w, at, got)
				}
				at += i + len(w)
			}
			for _, n := range c.not {
				if strings.Contains(got, n) {
					t.Errorf("%q in\n%s", n, got)
				}
			}
		})
	}
}

func TestNeedsLog(t *testing.T) {
	s := func(k string, ys ...float64) Series { return Series{Key: k, Y: ys} }
	cases := []struct {
		name   string
		series []Series
		want   bool
	}{
		{"43 and 25,000 tps", []Series{s("a", 40, 43, 0, 45), s("b", 25000, 24000)}, true},
		{"three times apart", []Series{s("a", 100, 110), s("b", 300, 330)}, false},
		{"one cell", []Series{s("a", 1, 1000, 100000)}, false},
		{"repeats of one cell count as the cell", []Series{s("a", 10), s("a", 1000)}, false},
		{"no values", []Series{s("a", math.NaN()), s("b")}, false},
	}
	for _, c := range cases {
		if got := NeedsLog(c.series); got != c.want {
			t.Errorf("%s: NeedsLog = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestChartSVG(t *testing.T) {
	c := &Chart{ID: "c1", Title: "tps", YLabel: "tps", Axis: "time", XMax: 4, Log: true,
		Series: []Series{
			{Key: "slow", Color: "#111", X: []float64{1, 2, 3, 4}, Y: []float64{40, 0, math.NaN(), 45}, DashUntil: 1},
			{Key: "fast", Color: "#222", X: []float64{1, 2, 3, 4}, Y: []float64{25000, 24000, 26000, 25500}},
		},
		Bands: []Band{{From: 0, To: 1, Color: "#888", Title: "warm-up"}, {Key: "slow", From: 2, To: 3, Color: "#111", Title: "stall"}},
		Marks: []Mark{{Key: "fast", X: 2.5, Label: "node2 pause"}},
	}
	var b strings.Builder
	c.svg(&b)
	svg := b.String()
	for _, w := range []string{"tps (log scale)", `class="line warm"`, `data-k="slow"`, `data-k="fast"`, "<title>stall</title>", "<title>node2 pause</title>"} {
		if !strings.Contains(svg, w) {
			t.Errorf("no %q in the chart", w)
		}
	}
	// The slow cell: warm-up dashed to t=1, then 1->2, a gap at 3 (NaN),
	// a new start at 4: two moves in the measured path.
	m := regexp.MustCompile(`<path class="line" d="([^"]*)" stroke="#111"`).FindStringSubmatch(svg)
	if m == nil {
		t.Fatalf("no measured path for the slow cell in\n%s", svg)
	}
	if n := strings.Count(m[1], "M"); n != 2 {
		t.Errorf("slow cell's path %q: %d moves, want 2 (the join from the warm-up and after the gap)", m[1], n)
	}
	// A zero on a log axis sits on the floor, inside the plot.
	yr := c.yRange()
	if y := yr.y(0); y != plotH {
		t.Errorf("0 on the log axis at y=%v, want the floor %d", y, plotH)
	}
	if yr.y(40) > plotH || yr.y(26000) < 0 {
		t.Errorf("values outside the plot: 40 at %v, 26000 at %v", yr.y(40), yr.y(26000))
	}
}

// The page holds everything itself: one inline style, the data and the
// script; an embedded graph loses its own script, handlers and ids, and
// one that would fetch something stays a link.
func TestPageSelfContained(t *testing.T) {
	files := map[string]string{
		"profiles/a/cpu.svg": `<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="1200" height="300" viewBox="0 0 1200 300"><style>.f{}</style>` +
			`<rect onclick="unzoom()"/><g class="f" id="f0" data-x="10" data-w="1180" onclick="zoom(this)"><title>mysqld</title><rect x="10" y="280" width="1180" height="15"/></g>` +
			`<script type="text/ecmascript"><![CDATA[function zoom(){}]]></script></svg>`,
		"profiles/b/cpu.svg": `<svg xmlns="http://www.w3.org/2000/svg"><image href="https://example.com/x.png"/></svg>`,
		"profiles/d/cpu.svg": `<svg xmlns="http://www.w3.org/2000/svg"><a href='javascript:alert(1)'><rect onmouseover='x()'/></a></svg>`,
	}
	p := &Page{Title: "t", ReadFile: func(rel string) ([]byte, error) {
		if s, ok := files[rel]; ok {
			return []byte(s), nil
		}
		return nil, errors.New("no such file")
	}}
	p.Sections = []Section{
		{ID: "s1", Title: "Profiles", Parts: []Part{{Markdown: "- a: [svg](profiles/a/cpu.svg)\n- b: [svg](profiles/b/cpu.svg)\n- c: [svg](profiles/c/cpu.svg)\n- d: [svg](profiles/d/cpu.svg)"}}},
		{ID: "s2", Title: "Over time", Parts: []Part{{Legend: &Legend{Items: []LegendItem{{Key: "a", Label: "a", Color: "#111"}}}},
			{Chart: &Chart{ID: "c1", Axis: "time", XMax: 2, Series: []Series{{Key: "a", Label: "a </script>", X: []float64{1, 2}, Y: []float64{1, math.NaN()}}}}}}},
	}
	var b bytes.Buffer
	if err := Write(&b, p); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if n := strings.Count(page, "<script"); n != 2 {
		t.Errorf("%d <script> elements, want 2 (the data and the page's own)", n)
	}
	for _, bad := range []string{"onclick=", "onmouseover", "javascript:", `id="f0"`, "<?xml", "https://example.com", "</script>\", ", "src="} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %q", bad)
		}
	}
	for _, want := range []string{`<svg class="flame"`, `<a href="#svg-1" class="flamelink" data-open="svg-1">svg</a>`,
		`<a href="profiles/b/cpu.svg">svg</a>`, `<a href="profiles/c/cpu.svg">svg</a>`, `"y":[1,null]`, `a \u003c/script\u003e`, "Content-Security-Policy"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

func TestPalette(t *testing.T) {
	cs := Palette(30)
	seen := map[string]bool{}
	for _, c := range cs {
		if seen[c] {
			t.Errorf("colour %s twice in %v", c, cs)
		}
		seen[c] = true
	}
	if len(cs) != 30 {
		t.Errorf("%d colours, want 30", len(cs))
	}
}

// Package htmlreport renders a results page: one self-contained HTML file
// (styles, script and data inlined; no request leaves it) from a list of
// sections that the caller assembles. It knows no feature: a section is
// Markdown (as summary.md writes it), charts, a legend of cells that
// switches them on and off, or parts side by side. results builds the
// page of a run, a merged run and a comparison (results/html.go).
package htmlreport

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

//go:embed assets/report.css
var css string

//go:embed assets/report.js
var script string

// Page is one report.
type Page struct {
	Title    string
	Subtitle string // plain text under the title
	Sections []Section
	// ReadFile reads a file a section links to, by its path relative to
	// the Part's Dir: a linked SVG (a flame graph) is embedded in the page.
	// Nil: nothing is embedded.
	ReadFile func(rel string) ([]byte, error)
	// Generator is the tool that wrote the page, for the footer.
	Generator string
}

// Section is a top-level part of the page, listed in its contents.
type Section struct {
	ID, Title string
	Parts     []Part
}

// Part is one piece of a section; exactly one of its fields is set.
type Part struct {
	// Markdown is rendered (see Markdown); links are relative to Dir
	// ("" for the page's own directory), and a link to a local .svg file
	// embeds that file in the section's gallery.
	Markdown string
	Dir      string
	Text     string // a plain paragraph
	Chart    *Chart
	Legend   *Legend
	// Group is a titled group of parts, folded unless Open.
	Group *Group
	// Columns are parts side by side (a comparison's two runs).
	Columns []Column
	// Links are files of the results directory.
	Links []Link
}

// Group is a folded list of parts.
type Group struct {
	Title string
	Open  bool
	Parts []Part
}

// Column is one side of a side-by-side part.
type Column struct {
	Title string
	Parts []Part
}

// Legend lists the cells with a switch each; switching one off hides its
// lines, stalls and marks in every chart of the page.
type Legend struct {
	Items []LegendItem
}

// LegendItem is one cell of the legend.
type LegendItem struct {
	Key, Label, Color string
	Note              string // after the label: "(2 repeats)"
}

// Link is a file of a results directory.
type Link struct {
	Href, Label, Note string
}

// Write renders the page.
func Write(w io.Writer, p *Page) error {
	r := &renderer{page: p, xs: map[string]int{}}
	var body strings.Builder
	for _, s := range p.Sections {
		r.gallery = nil
		fmt.Fprintf(&body, "<section id=\"%s\">\n", attr(s.ID))
		if s.Title != "" {
			fmt.Fprintf(&body, "<h2>%s</h2>\n", html.EscapeString(s.Title))
		}
		for _, part := range s.Parts {
			r.part(&body, part)
		}
		r.writeGallery(&body)
		body.WriteString("</section>\n")
	}
	var b bytes.Buffer
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	b.WriteString("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	// No request may leave the file: the policy forbids every fetch but
	// the page's own inline styles and script.
	b.WriteString("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n")
	fmt.Fprintf(&b, "<title>%s</title>\n<style>\n%s</style>\n</head>\n<body>\n", html.EscapeString(p.Title), css)
	fmt.Fprintf(&b, "<header><h1>%s</h1>\n", html.EscapeString(p.Title))
	if p.Subtitle != "" {
		fmt.Fprintf(&b, "<p class=\"subtitle\">%s</p>\n", html.EscapeString(p.Subtitle))
	}
	b.WriteString("<nav><ul>")
	for _, s := range p.Sections {
		if s.Title != "" {
			fmt.Fprintf(&b, "<li><a href=\"#%s\">%s</a></li>", attr(s.ID), html.EscapeString(s.Title))
		}
	}
	b.WriteString("</ul></nav></header>\n<main>\n")
	b.WriteString(body.String())
	b.WriteString("</main>\n<div id=\"tip\" class=\"tip\" hidden></div>\n")
	if p.Generator != "" {
		fmt.Fprintf(&b, "<footer>Written by %s. One file: open it in any browser, no server and no network needed.</footer>\n", html.EscapeString(p.Generator))
	}
	b.WriteString("<script type=\"application/json\" id=\"bm-data\">")
	b.WriteString(strings.ReplaceAll(r.data(), "</", `<\/`))
	b.WriteString("</script>\n<script>\n")
	b.WriteString(script)
	b.WriteString("</script>\n</body>\n</html>\n")
	_, err := w.Write(b.Bytes())
	return err
}

type renderer struct {
	page    *Page
	charts  []*Chart
	xs      map[string]int // an x array's JSON -> its index
	xlist   []string
	gallery []embedded
	nsvg    int
}

type embedded struct {
	id, title, svg string
}

func (r *renderer) part(b *strings.Builder, p Part) {
	switch {
	case p.Markdown != "":
		b.WriteString(r.markdown(p.Markdown, p.Dir))
	case p.Text != "":
		fmt.Fprintf(b, "<p>%s</p>\n", html.EscapeString(p.Text))
	case p.Chart != nil:
		r.charts = append(r.charts, p.Chart)
		b.WriteString("<figure class=\"chartbox\">")
		if p.Chart.Title != "" {
			fmt.Fprintf(b, "<figcaption>%s <button class=\"unzoom\" hidden>reset zoom</button></figcaption>", html.EscapeString(p.Chart.Title))
		}
		p.Chart.svg(b)
		if p.Chart.Note != "" {
			fmt.Fprintf(b, "<p class=\"note\">%s</p>", html.EscapeString(p.Chart.Note))
		}
		b.WriteString("</figure>\n")
	case p.Legend != nil:
		b.WriteString("<div class=\"legend\"><span class=\"legendhead\">Cells: <button data-all=\"1\">all</button> <button data-all=\"0\">none</button></span>")
		for _, it := range p.Legend.Items {
			fmt.Fprintf(b, "<label class=\"cell\"><input type=\"checkbox\" checked data-toggle=\"%s\"><span class=\"swatch\" style=\"background:%s\"></span>%s",
				attr(it.Key), attr(it.Color), html.EscapeString(it.Label))
			if it.Note != "" {
				fmt.Fprintf(b, " <span class=\"dim\">%s</span>", html.EscapeString(it.Note))
			}
			b.WriteString("</label>")
		}
		b.WriteString("</div>\n")
	case p.Group != nil:
		open := ""
		if p.Group.Open {
			open = " open"
		}
		fmt.Fprintf(b, "<details class=\"group\"%s><summary>%s</summary>\n", open, html.EscapeString(p.Group.Title))
		for _, q := range p.Group.Parts {
			r.part(b, q)
		}
		b.WriteString("</details>\n")
	case len(p.Columns) > 0:
		b.WriteString("<div class=\"columns\">")
		for _, c := range p.Columns {
			b.WriteString("<div class=\"column\">")
			if c.Title != "" {
				fmt.Fprintf(b, "<h3 class=\"coltitle\">%s</h3>", html.EscapeString(c.Title))
			}
			for _, q := range c.Parts {
				r.part(b, q)
			}
			b.WriteString("</div>")
		}
		b.WriteString("</div>\n")
	case len(p.Links) > 0:
		b.WriteString("<ul class=\"files\">")
		for _, l := range p.Links {
			fmt.Fprintf(b, "<li><a href=\"%s\">%s</a>", attr(safeURL(l.Href)), html.EscapeString(l.Label))
			if l.Note != "" {
				fmt.Fprintf(b, ": %s", html.EscapeString(l.Note))
			}
			b.WriteString("</li>")
		}
		b.WriteString("</ul>\n")
	}
}

var hrefRe = regexp.MustCompile(`<a href="([^"]*)">([^<]*)</a>`)

// markdown renders a part's Markdown: links relative to dir are rewritten
// relative to the page, and a link to a local .svg file points into the
// section's gallery, where the file is embedded.
func (r *renderer) markdown(md, dir string) string {
	out := Markdown(md)
	return hrefRe.ReplaceAllStringFunc(out, func(m string) string {
		sub := hrefRe.FindStringSubmatch(m)
		href := html.UnescapeString(sub[1])
		if href == "" || strings.Contains(href, ":") || strings.HasPrefix(href, "#") || strings.HasPrefix(href, "/") {
			return m
		}
		rel := href
		if dir != "" {
			rel = path.Join(dir, href)
		}
		if strings.HasSuffix(strings.ToLower(href), ".svg") && r.page.ReadFile != nil {
			if id, ok := r.embed(rel, href); ok {
				return fmt.Sprintf(`<a href="#%s" class="flamelink" data-open="%s">%s</a>`, id, id, sub[2])
			}
		}
		return fmt.Sprintf(`<a href="%s">%s</a>`, attr(rel), sub[2])
	})
}

var (
	xmlDeclRe  = regexp.MustCompile(`(?s)<\?xml.*?\?>`)
	doctypeRe  = regexp.MustCompile(`(?s)<!DOCTYPE.*?>`)
	scriptRe   = regexp.MustCompile(`(?is)<script.*?</script>`)
	styleRe    = regexp.MustCompile(`(?is)<style.*?</style>`)
	handlerRe  = regexp.MustCompile(`(?i)\son[a-z]+\s*=\s*("[^"]*"|'[^']*')`)
	idAttrRe   = regexp.MustCompile(`\sid="[^"]*"`)
	svgOpenRe  = regexp.MustCompile(`(?s)<svg\b[^>]*>`)
	svgSizeRe  = regexp.MustCompile(`\s(width|height)="[^"]*"`)
	externalRe = regexp.MustCompile(`(?i)(href|src)\s*=\s*["']\s*(https?:|//|javascript:|data:)`)
)

// embed reads a linked SVG and keeps it for the section's gallery, made
// safe to inline: no script, style, event handler or id of its own (the
// page's script zooms and searches it), sized by the page.
func (r *renderer) embed(rel, label string) (string, bool) {
	for _, g := range r.gallery {
		if g.title == rel {
			return g.id, true
		}
	}
	data, err := r.page.ReadFile(rel)
	if err != nil || !bytes.Contains(data, []byte("<svg")) {
		return "", false
	}
	s := string(data)
	s = xmlDeclRe.ReplaceAllString(s, "")
	s = doctypeRe.ReplaceAllString(s, "")
	s = scriptRe.ReplaceAllString(s, "")
	s = styleRe.ReplaceAllString(s, "")
	s = handlerRe.ReplaceAllString(s, "")
	s = idAttrRe.ReplaceAllString(s, "")
	if externalRe.MatchString(s) {
		return "", false // it would fetch something: leave it a link
	}
	s = svgOpenRe.ReplaceAllStringFunc(s, func(open string) string {
		return strings.Replace(svgSizeRe.ReplaceAllString(open, ""), "<svg", `<svg class="flame"`, 1)
	})
	r.nsvg++
	id := "svg-" + strconv.Itoa(r.nsvg)
	r.gallery = append(r.gallery, embedded{id: id, title: rel, svg: strings.TrimSpace(s)})
	return id, true
}

func (r *renderer) writeGallery(b *strings.Builder) {
	if len(r.gallery) == 0 {
		return
	}
	fmt.Fprintf(b, "<h3>Graphs embedded from the results directory (%d)</h3>\n", len(r.gallery))
	b.WriteString("<p class=\"note\">Click a frame to zoom into it, the background to zoom out; the search box marks the frames whose name matches and says what share of the graph they hold.</p>\n")
	for _, g := range r.gallery {
		fmt.Fprintf(b, "<details class=\"flamebox\" id=\"%s\"><summary>%s</summary>", g.id, html.EscapeString(g.title))
		b.WriteString("<div class=\"flametools\"><input type=\"search\" placeholder=\"search functions (regular expression)\" class=\"flamesearch\"> <span class=\"flamehits\"></span></div>")
		b.WriteString(g.svg)
		b.WriteString("</details>\n")
	}
}

// data is the page's charts as JSON for the script: every distinct x array
// once (the cells' clocks, shared by every metric), then per chart its
// series' keys, labels, colours, x array and y values.
func (r *renderer) data() string {
	var b strings.Builder
	b.WriteString(`{"charts":{`)
	for i, c := range r.charts {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(jsonString(c.ID))
		fmt.Fprintf(&b, `:{"log":%t,"s":[`, c.Log)
		for j, s := range c.Series {
			if j > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `{"k":%s,"l":%s,"c":%s,"x":%d,"y":%s}`, jsonString(s.Key), jsonString(s.Label), jsonString(s.Color), r.xIndex(s.X), numbers(s.Y))
		}
		b.WriteString("]}")
	}
	b.WriteString(`},"xs":[`)
	b.WriteString(strings.Join(r.xlist, ","))
	b.WriteString("]}")
	return b.String()
}

func (r *renderer) xIndex(x []float64) int {
	s := numbers(x)
	if i, ok := r.xs[s]; ok {
		return i
	}
	r.xs[s] = len(r.xlist)
	r.xlist = append(r.xlist, s)
	return len(r.xlist) - 1
}

func numbers(vs []float64) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = jsonNum(v)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Palette gives n distinguishable colours: Tableau 10 first, then hues
// spread around the circle at two lightnesses.
func Palette(n int) []string {
	base := []string{"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#b07aa1", "#76b7b2", "#edc948", "#9c755f", "#ff9da7", "#79706e"}
	out := slices.Clone(base[:min(n, len(base))])
	for i := len(base); i < n; i++ {
		k := i - len(base)
		hue := (k * 137) % 360 // the golden angle: neighbours far apart
		light := 38
		if k%2 == 1 {
			light = 55
		}
		out = append(out, fmt.Sprintf("hsl(%d,65%%,%d%%)", hue, light))
	}
	return out
}

package profile

import (
	"bufio"
	"fmt"
	"hash/fnv"
	"html"
	"io"
	"math"
	"strings"
)

// The flame graph's geometry: a frame is frameHeight pixels high; a label
// is drawn when at least minLabelChars characters of it fit.
const (
	svgWidth      = 1200.0
	frameHeight   = 17
	fontSize      = 12
	charWidth     = 7.0 // of the 12 px monospace font
	minFrameWidth = 0.5 // px: narrower frames are not drawn
	minLabelChars = 3
	padTop        = 48
	padSide       = 10
	padBottom     = 24
	subLine       = 16 // px between the subtitle's lines
)

// WriteFlameGraph draws the profile as a self-contained SVG flame graph:
// one box per call path, as wide as its share, callers below callees,
// the thread kinds at the bottom; each box has a <title> (its name, time
// and share: the tooltip) and a label when it fits. A click on a frame
// zooms to it, a click on the background resets (a few lines of script;
// the graph reads without it). An empty profile is not drawn: the caller
// says so instead (ErrEmpty).
//
// An off-CPU (or on+off-CPU) graph shows the workload's threads only, when
// the profile has them: idle InnoDB pool threads and the sampler's idle
// session wait most of the time, and drawn they fill most of the width
// (the commit's waits would have to be zoomed to). The subtitle states the
// share of each kind left out; WriteFlameGraphAll draws every thread, and
// the folded stacks hold them all. Time threads spent runnable but
// preempted is never in an off-CPU graph (Profile.Runqueue); the subtitle
// states it too.
func WriteFlameGraph(w io.Writer, p *Profile, title string) error {
	if p.Empty() {
		return ErrEmpty
	}
	if p.Mode == OnCPU {
		return WriteFlameGraphAll(w, p, title)
	}
	work, hidden := p.Workload()
	sub := fmt.Sprintf("%s of the %s threads: %s in %d records; width = share of their time", p.Mode.Unit(), work.Kind, duration(work.Total()), p.Records)
	if len(hidden) == 0 {
		return writeFlame(w, p, title, p.Mode.Unit()+": "+duration(p.Total())+fmt.Sprintf(" in %d records; width = share of the time", p.Records))
	}
	var parts []string
	for _, k := range hidden {
		parts = append(parts, fmt.Sprintf("%s %.1f%%", k.Kind, 100*k.Share))
	}
	sub += "\nnot drawn, share of all threads' " + p.Mode.Unit() + ": " + strings.Join(parts, ", ") + " (all threads: the .folded file)"
	return writeFlame(w, work.Profile, title, sub)
}

// WriteFlameGraphAll is WriteFlameGraph drawing every thread.
func WriteFlameGraphAll(w io.Writer, p *Profile, title string) error {
	if p.Empty() {
		return ErrEmpty
	}
	return writeFlame(w, p, title, fmt.Sprintf("%s: %s in %d records; width = share of the time", p.Mode.Unit(), duration(p.Total()), p.Records))
}

func writeFlame(w io.Writer, p *Profile, title, sub string) error {
	if rq := p.RunqueueTotal(); rq > 0 && p.Mode != OnCPU {
		sub += fmt.Sprintf("\nleft out: %s runnable but preempted (waiting for a CPU, not for the server)", duration(rq))
	}
	root := callTree(p, nil)
	total := float64(root.a)
	unit := p.Mode.Unit()
	label := func(n *node) string {
		return fmt.Sprintf("%s\n%s, %.2f%% of %s", n.name, duration(n.a), 100*float64(n.a)/total, unit)
	}
	color := func(n *node, depth int) string { return warm(n.name, depth) }
	return drawFlame(w, root, func(n *node) float64 { return float64(n.a) }, title, sub, label, color)
}

// WriteDiffFlameGraph draws a scenario against a baseline: every call path
// of either, as wide as the mean of its two shares (so both profiles'
// paths show, those gone too), red where the scenario spends a larger
// share than the baseline, blue where a smaller one, the deeper the colour
// the larger the difference (in points of share); the title of each box
// gives both shares.
func WriteDiffFlameGraph(w io.Writer, base, scen *Profile, title string) error {
	if base.Empty() || scen.Empty() {
		return ErrEmpty
	}
	root := callTree(base, scen)
	ta, tb := float64(root.a), float64(root.b)
	width := func(n *node) float64 { return (float64(n.a)/ta + float64(n.b)/tb) / 2 }
	label := func(n *node) string {
		sa, sb := 100*float64(n.a)/ta, 100*float64(n.b)/tb
		return fmt.Sprintf("%s\nbaseline %.2f%%, scenario %.2f%% (%+.2f points)", n.name, sa, sb, sb-sa)
	}
	color := func(n *node, depth int) string {
		d := float64(n.b)/tb - float64(n.a)/ta // share points
		return diffColor(d)
	}
	sub := fmt.Sprintf("%s: red = larger share in the scenario, blue = smaller; width = mean of the two shares", base.Mode.Unit())
	return drawFlame(w, root, width, title, sub, label, color)
}

// ErrEmpty is a profile with no samples: nothing to draw.
var ErrEmpty = fmt.Errorf("the profile captured no samples")

type box struct {
	x, w  float64
	depth int
	n     *node
}

func drawFlame(w io.Writer, root *node, width func(*node) float64, title, sub string,
	label func(*node) string, color func(*node, int) string) error {
	scale := (svgWidth - 2*padSide) / width(root)
	var boxes []box
	maxDepth := 0
	var lay func(n *node, x float64, depth int)
	lay = func(n *node, x float64, depth int) {
		wd := width(n) * scale
		if wd < minFrameWidth {
			return
		}
		boxes = append(boxes, box{x, wd, depth, n})
		maxDepth = max(maxDepth, depth)
		cx := x
		for _, c := range n.children {
			lay(c, cx, depth+1)
			cx += width(c) * scale
		}
	}
	lay(root, padSide, 0)
	// The subtitle may have several lines (what the graph leaves out).
	subs := strings.Split(sub, "\n")
	height := padTop + (len(subs)-1)*subLine + (maxDepth+1)*frameHeight + padBottom
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, `<?xml version="1.0" encoding="UTF-8" standalone="no"?>
<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="%.0f" height="%d" viewBox="0 0 %.0f %d" font-family="monospace" font-size="%d">
<style>.f:hover rect{stroke:#000;stroke-width:0.5} text{pointer-events:none}</style>
<rect x="0" y="0" width="100%%" height="100%%" fill="#f8f8f8" onclick="unzoom()"/>
<text x="%.0f" y="20" text-anchor="middle" font-size="16">%s</text>
`, svgWidth, height, svgWidth, height, fontSize, svgWidth/2, esc(title))
	for i, l := range subs {
		fmt.Fprintf(bw, "<text x=\"%.0f\" y=\"%d\" text-anchor=\"middle\" fill=\"#555\">%s</text>\n", svgWidth/2, 38+i*subLine, esc(l))
	}
	for i, b := range boxes {
		y := height - padBottom - (b.depth+1)*frameHeight
		fmt.Fprintf(bw, `<g class="f" id="f%d" data-x="%.2f" data-w="%.2f" onclick="zoom(this)"><title>%s</title><rect x="%.2f" y="%d" width="%.2f" height="%d" fill="%s" rx="1"/>`,
			i, b.x, b.w, esc(label(b.n)), b.x, y, b.w, frameHeight-1, color(b.n, b.depth))
		if t := fit(b.n.name, b.w); t != "" {
			fmt.Fprintf(bw, `<text x="%.2f" y="%d">%s</text>`, b.x+3, y+fontSize, esc(t))
		}
		bw.WriteString("</g>\n")
	}
	bw.WriteString(zoomScript)
	bw.WriteString("</svg>\n")
	return bw.Flush()
}

// zoomScript: clicking a frame stretches it and its callees to the full
// width (frames outside it are hidden); clicking the background resets.
// Labels are cut again to the new widths.
const zoomScript = `<script type="text/ecmascript"><![CDATA[
function fr(g){return {x:+g.dataset.x,w:+g.dataset.w}}
function relabel(g,w){var t=g.querySelector("text");if(!t)return;if(!t.dataset.full)t.dataset.full=t.textContent;var full=g.querySelector("title").textContent.split("\n")[0];var n=Math.floor((w-6)/7);t.textContent=n<3?"":(full.length<=n?full:full.slice(0,n-2)+"..")}
function zoom(z){var a=fr(z),k=1180/a.w,y=+z.querySelector("rect").getAttribute("y");document.querySelectorAll("g.f").forEach(function(g){var b=fr(g),r=g.querySelector("rect"),t=g.querySelector("text"),gy=+r.getAttribute("y");var inside=b.x>=a.x-0.01&&b.x+b.w<=a.x+a.w+0.01;var below=gy>y;if(!inside&&!below){g.style.display="none";return}g.style.display="";var nx=inside?10+(b.x-a.x)*k:10,nw=inside?b.w*k:1180;r.setAttribute("x",nx);r.setAttribute("width",nw);if(t)t.setAttribute("x",nx+3);relabel(g,nw)});}
function unzoom(){document.querySelectorAll("g.f").forEach(function(g){var b=fr(g),r=g.querySelector("rect"),t=g.querySelector("text");g.style.display="";r.setAttribute("x",b.x);r.setAttribute("width",b.w);if(t)t.setAttribute("x",b.x+3);relabel(g,b.w)})}
]]></script>
`

// fit cuts a label to the characters a box holds ("..", when cut), or
// nothing when fewer than minLabelChars fit.
func fit(s string, w float64) string {
	n := int((w - 6) / charWidth)
	if n < minLabelChars {
		return ""
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-2]) + ".."
}

func esc(s string) string { return html.EscapeString(s) }

// warm is the classic flame graph palette: red to yellow, the hue from a
// hash of the name so a function keeps its colour across graphs; kernel
// frames (the syscall and scheduler side) orange, unknown frames grey.
func warm(name string, depth int) string {
	if depth == 0 {
		return "rgb(220,220,220)"
	}
	h := fnv.New32a()
	h.Write([]byte(name))
	v := h.Sum32()
	switch {
	case strings.HasPrefix(name, "[") && strings.HasSuffix(name, "]"):
		return fmt.Sprintf("rgb(%d,%d,%d)", 180+v%30, 180+v%30, 180+v%30)
	case isKernel(name):
		return fmt.Sprintf("rgb(%d,%d,%d)", 220+v%30, 120+(v>>8)%50, 40+(v>>16)%30)
	}
	return fmt.Sprintf("rgb(%d,%d,%d)", 205+v%50, 80+(v>>8)%150, 40+(v>>16)%40)
}

// isKernel guesses a kernel frame by the names the scheduler and the
// syscall entry carry (perf marks them [kernel.kallsyms], which the
// folded frame no longer holds).
func isKernel(name string) bool {
	for _, p := range []string{"__x64_sys_", "do_syscall_64", "entry_SYSCALL", "schedule", "__schedule", "io_schedule", "ext4_", "blkdev_", "submit_bio", "futex_", "do_futex", "irqentry_", "asm_", "exit_to_user_mode", "iomap_", "vfs_", "jbd2_"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// diffColor: white for no change, to full red at +maxDiff points of share
// and full blue at -maxDiff.
func diffColor(d float64) string {
	const maxDiff = 0.10
	t := math.Min(math.Abs(d)/maxDiff, 1)
	fade := int(255 - 200*t)
	if d > 0 {
		return fmt.Sprintf("rgb(255,%d,%d)", fade, fade)
	}
	return fmt.Sprintf("rgb(%d,%d,255)", fade, fade)
}

// duration prints nanoseconds in a readable unit.
func duration(ns int64) string {
	switch {
	case ns >= 1e9:
		return fmt.Sprintf("%.2f s", float64(ns)/1e9)
	case ns >= 1e6:
		return fmt.Sprintf("%.1f ms", float64(ns)/1e6)
	}
	return fmt.Sprintf("%.0f µs", float64(ns)/1e3)
}

// Package figure is the look of the PNG figures of a run's reports: the
// font, the colours of text and grid, and the layout of a title, a caption,
// a legend and panels aligned on their data areas. results draws its
// figures with it, and a feature draws its own (the capacity curves)
// without importing results.
package figure

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"image/color"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// The colours of text and grid lines, the resolution, and the width of a
// figure of one panel (the bar chart, a capacity curve).
var (
	GridColor = color.Gray{Y: 0xe4}
	TextColor = color.Gray{Y: 0x40}
)

const (
	dpi      = 110
	BarWidth = 9 * vg.Inch
)

// SafeName makes s a file name that is safe on common filesystems and in
// Markdown links: letters, digits and . _ = + , - stay, the rest is "_";
// a long name is cut and made unique with a hash.
func SafeName(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', strings.ContainsRune("._=+,-", r):
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	out := strings.TrimLeft(b.String(), ".")
	if len(out) > 100 {
		sum := sha256.Sum256([]byte(s))
		out = fmt.Sprintf("%s-%x", out[:90], sum[:4])
	}
	return out
}

// face is the sans-serif face of the fonts gonum/plot embeds.
var face = font.Font{Typeface: "Liberation", Variant: "Sans"}

// TextStyle is the figures' text at a size and colour.
func TextStyle(size vg.Length, c color.Color) text.Style {
	return text.Style{Color: c, Font: font.From(face, size), Handler: plot.DefaultTextHandler}
}

// Restyle changes a text style's font size and colour, keeping its
// alignment and rotation.
func Restyle(s *text.Style, size vg.Length, c color.Color) {
	s.Font = font.From(face, size)
	s.Color = c
}

// Clip cuts s to n characters, the last an ellipsis.
func Clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// Legend is one entry of a figure's legend.
type Legend struct {
	Label string
	Thumb plot.Thumbnailer
}

// wrap breaks text into lines no wider than width.
func wrap(sty text.Style, s string, width vg.Length) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		next := w
		if line != "" {
			next = line + " " + w
		}
		if line != "" && sty.Rectangle(next).Size().X > width {
			lines = append(lines, line)
			next = w
		}
		line = next
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// Render lays out a title, a caption and the legend (in rows, above
// the panels where it cannot hide data), then the panels aligned on their
// data areas; it returns the PNG.
func Render(w, h vg.Length, title, caption string, panels [][]*plot.Plot, legend []Legend) ([]byte, error) {
	img := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(dpi))
	dc := draw.New(img)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())

	pad := vg.Points(8)
	left := dc.Min.X + pad
	ts := TextStyle(14, color.Black)
	ts.XAlign, ts.YAlign = draw.XLeft, draw.YTop
	y := dc.Max.Y - pad
	title = Clip(title, 120)
	dc.FillText(ts, vg.Point{X: left, Y: y}, title)
	y -= ts.Rectangle(title).Size().Y + vg.Points(4)
	if caption != "" {
		cs := TextStyle(9.5, TextColor)
		cs.XAlign, cs.YAlign = draw.XLeft, draw.YTop
		for _, line := range wrap(cs, caption, dc.Max.X-pad-left) {
			dc.FillText(cs, vg.Point{X: left, Y: y}, line)
			y -= cs.Rectangle(line).Size().Y
		}
		y -= vg.Points(4)
	}
	if len(legend) > 0 {
		ls := TextStyle(10, color.Black)
		ls.YAlign = draw.YCenter
		thumbW, rowH, gap := vg.Points(22), vg.Points(15), vg.Points(5)
		x := left
		y -= rowH / 2
		for _, it := range legend {
			iw := thumbW + gap + ls.Rectangle(it.Label).Size().X + 3*gap
			if x > left && x+iw > dc.Max.X-pad {
				x = left
				y -= rowH
			}
			tc := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
				Min: vg.Point{X: x, Y: y - rowH/2 + vg.Points(2)}, Max: vg.Point{X: x + thumbW, Y: y + rowH/2 - vg.Points(2)}}}
			it.Thumb.Thumbnail(&tc)
			dc.FillText(ls, vg.Point{X: x + thumbW + gap, Y: y}, it.Label)
			x += iw
		}
		y -= rowH / 2
	}
	area := draw.Crop(dc, 0, 0, 0, -(dc.Max.Y - y))
	tiles := draw.Tiles{Rows: len(panels), Cols: len(panels[0]), PadY: vg.Points(6), PadLeft: pad, PadRight: 2 * pad, PadBottom: pad / 2, PadTop: pad / 2}
	canvases := plot.Align(panels, tiles, area)
	for i, row := range panels {
		for j, p := range row {
			p.Draw(canvases[i][j])
		}
	}
	var b bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

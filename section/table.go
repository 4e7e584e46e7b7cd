package section

import (
	"io"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// MarkdownTable writes a Markdown table, the first column left-aligned
// and the figures right-aligned: every table of summary.md.
func MarkdownTable(w io.Writer, header []string, rows [][]string) error {
	return Table(w, header, rows, Alignments(len(header)), true)
}

// Table draws a table with the given column alignments, in box
// characters or as Markdown.
func Table(w io.Writer, header []string, rows [][]string, aligns []tw.Align, markdown bool) error {
	opts := []tablewriter.Option{
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: aligns}),
	}
	if markdown {
		opts = append(opts, tablewriter.WithRenderer(renderer.NewMarkdown()))
	}
	t := tablewriter.NewTable(w, opts...)
	t.Header(anyRow(header)...)
	for _, row := range rows {
		if err := t.Append(anyRow(row)...); err != nil {
			return err
		}
	}
	return t.Render()
}

// Alignments are the first column left and the others right.
func Alignments(n int) []tw.Align {
	a := make([]tw.Align, n)
	for i := range a {
		a[i] = tw.AlignRight
	}
	a[0] = tw.AlignLeft
	return a
}

func anyRow(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// Plural is "s" unless n is 1.
func Plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// IntsOrNone lists xs ("1, 2, 3"), or says "none".
func IntsOrNone(xs []int) string {
	if len(xs) == 0 {
		return "none"
	}
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, ", ")
}

package htmlreport

import (
	"html"
	"regexp"
	"strings"
)

// Markdown renders the Markdown that summary.md's sections write as HTML:
// headings, paragraphs, nested lists, pipe tables (with their alignment),
// fenced code, **bold**, `code`, links and backslash escapes. It is not a
// general Markdown renderer: it covers what results writes, and anything
// else comes out as escaped text, never as markup. Images become links (an
// <img> would be a request the page must not make).
func Markdown(md string) string {
	var b strings.Builder
	renderBlocks(&b, strings.Split(strings.ReplaceAll(md, "\r\n", "\n"), "\n"), 0)
	return b.String()
}

var (
	headingRe = regexp.MustCompile(`^(#{1,6})\s+(.*)$`)
	itemRe    = regexp.MustCompile(`^(\s*)[-*+]\s+(.*)$`)
	sepCellRe = regexp.MustCompile(`^\s*:?-+:?\s*$`)
)

func indentOf(s string) int { return len(s) - len(strings.TrimLeft(s, " ")) }

func isFence(s string) bool { return strings.HasPrefix(strings.TrimSpace(s), "```") }

// renderBlocks renders lines as blocks; headings are shifted by shift
// levels (0 keeps them).
func renderBlocks(b *strings.Builder, lines []string, shift int) {
	for i := 0; i < len(lines); {
		line := lines[i]
		trim := strings.TrimSpace(line)
		switch {
		case trim == "":
			i++
		case isFence(line):
			ind := indentOf(line)
			j := i + 1
			var code []string
			for j < len(lines) && !isFence(lines[j]) {
				l := lines[j]
				if indentOf(l) >= ind {
					l = l[ind:]
				} else {
					l = strings.TrimLeft(l, " ")
				}
				code = append(code, l)
				j++
			}
			b.WriteString("<pre><code>")
			b.WriteString(html.EscapeString(strings.Join(code, "\n")))
			b.WriteString("</code></pre>\n")
			i = j + 1
		case headingRe.MatchString(trim) && indentOf(line) < 4:
			m := headingRe.FindStringSubmatch(trim)
			lvl := min(len(m[1])+shift, 6)
			text := Inline(m[2])
			b.WriteString("<h" + string(rune('0'+lvl)) + " id=\"" + anchor(m[2]) + "\">" + text + "</h" + string(rune('0'+lvl)) + ">\n")
			i++
		case strings.HasPrefix(trim, "|"):
			j := i
			for j < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[j]), "|") {
				j++
			}
			renderTable(b, lines[i:j])
			i = j
		case itemRe.MatchString(line):
			i = renderList(b, lines, i, shift)
		default:
			j := i
			var para []string
			for j < len(lines) {
				l := lines[j]
				t := strings.TrimSpace(l)
				if t == "" || isFence(l) || strings.HasPrefix(t, "|") || itemRe.MatchString(l) || (headingRe.MatchString(t) && j > i) {
					break
				}
				para = append(para, t)
				j++
			}
			if j == i { // a heading-looking line that did not match above
				para, j = []string{trim}, i+1
			}
			b.WriteString("<p>" + Inline(strings.Join(para, "\n")) + "</p>\n")
			i = j
		}
	}
}

// renderList renders the list that starts at lines[i] and returns the
// index of the first line after it. An item holds its first line and every
// following line indented deeper than its marker (nested lists, fenced
// blocks); a blank line ends the list unless an indented line follows.
func renderList(b *strings.Builder, lines []string, i, shift int) int {
	base := indentOf(lines[i])
	b.WriteString("<ul>\n")
	for i < len(lines) {
		m := itemRe.FindStringSubmatch(lines[i])
		if m == nil || len(m[1]) != base {
			break
		}
		first := m[2]
		j := i + 1
		var body []string
		for j < len(lines) {
			l := lines[j]
			if strings.TrimSpace(l) == "" {
				// Part of the item only if an indented line follows.
				k := j
				for k < len(lines) && strings.TrimSpace(lines[k]) == "" {
					k++
				}
				if k < len(lines) && indentOf(lines[k]) > base {
					for ; j < k; j++ {
						body = append(body, "")
					}
					continue
				}
				break
			}
			if indentOf(l) <= base {
				break
			}
			cut := min(indentOf(l), base+2)
			body = append(body, l[cut:])
			j++
		}
		b.WriteString("<li>" + Inline(first))
		if len(body) > 0 {
			b.WriteString("\n")
			renderBlocks(b, body, shift)
		}
		b.WriteString("</li>\n")
		i = j
		// Blank lines between items of the same list.
		k := i
		for k < len(lines) && strings.TrimSpace(lines[k]) == "" {
			k++
		}
		if k > i && k < len(lines) {
			if m := itemRe.FindStringSubmatch(lines[k]); m != nil && len(m[1]) == base {
				i = k
			}
		}
	}
	b.WriteString("</ul>\n")
	return i
}

// splitRow splits a table row on the pipes that are not escaped.
func splitRow(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(line, "|")
	if strings.HasSuffix(line, "|") && !strings.HasSuffix(line, `\|`) {
		line = line[:len(line)-1]
	}
	var cells []string
	var cur strings.Builder
	for i := 0; i < len(line); i++ {
		c := line[i]
		if c == '\\' && i+1 < len(line) && line[i+1] == '|' {
			cur.WriteString(`\|`)
			i++
			continue
		}
		if c == '|' {
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
			continue
		}
		cur.WriteByte(c)
	}
	return append(cells, strings.TrimSpace(cur.String()))
}

func renderTable(b *strings.Builder, lines []string) {
	rows := make([][]string, len(lines))
	for i, l := range lines {
		rows[i] = splitRow(l)
	}
	var head []string
	var aligns []string
	if len(rows) >= 2 {
		sep := true
		for _, c := range rows[1] {
			sep = sep && sepCellRe.MatchString(c)
		}
		if sep {
			head = rows[0]
			for _, c := range rows[1] {
				c = strings.TrimSpace(c)
				switch {
				case strings.HasPrefix(c, ":") && strings.HasSuffix(c, ":"):
					aligns = append(aligns, "center")
				case strings.HasSuffix(c, ":"):
					aligns = append(aligns, "right")
				default:
					aligns = append(aligns, "")
				}
			}
			rows = rows[2:]
		}
	}
	align := func(i int) string {
		if i < len(aligns) && aligns[i] != "" {
			return ` class="` + aligns[i] + `"`
		}
		return ""
	}
	b.WriteString("<div class=\"tablewrap\"><table class=\"sortable\">\n")
	if strings.Join(head, "") == "" {
		head = nil // a header row of empty cells (a key-value table)
	}
	if head != nil {
		b.WriteString("<thead><tr>")
		for i, c := range head {
			b.WriteString("<th" + align(i) + ` title="click to sort">` + Inline(c) + "</th>")
		}
		b.WriteString("</tr></thead>\n")
	}
	b.WriteString("<tbody>\n")
	for _, r := range rows {
		b.WriteString("<tr>")
		for i, c := range r {
			b.WriteString("<td" + align(i) + ">" + Inline(c) + "</td>")
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</tbody></table></div>\n")
}

// Inline renders one block's inline Markdown: backslash escapes, `code`,
// **bold**, [links](url) and ![images](src) (as links); the rest escaped.
func Inline(s string) string {
	var b strings.Builder
	strong := false
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && strings.IndexByte("\\`*_{}[]()#+-.!|<>", s[i+1]) >= 0:
			b.WriteString(html.EscapeString(s[i+1 : i+2]))
			i += 2
		case c == '`':
			n := 0
			for i+n < len(s) && s[i+n] == '`' {
				n++
			}
			fence := s[i : i+n]
			end := strings.Index(s[i+n:], fence)
			if end < 0 {
				b.WriteString(html.EscapeString(fence))
				i += n
				continue
			}
			b.WriteString("<code>" + html.EscapeString(strings.TrimSpace(s[i+n:i+n+end])) + "</code>")
			i += n + end + n
		case c == '*' && strings.HasPrefix(s[i:], "**"):
			if strong {
				b.WriteString("</strong>")
			} else if strings.Contains(s[i+2:], "**") {
				b.WriteString("<strong>")
			} else {
				b.WriteString("**")
				i += 2
				continue
			}
			strong = !strong
			i += 2
		case c == '[' || (c == '!' && i+1 < len(s) && s[i+1] == '['):
			img := c == '!'
			start := i
			if img {
				start++
			}
			text, url, n, ok := link(s[start:])
			if !ok {
				b.WriteString(html.EscapeString(s[i : i+1]))
				i++
				continue
			}
			label := Inline(text)
			if img {
				label = "figure: " + label
			}
			b.WriteString(`<a href="` + html.EscapeString(safeURL(url)) + `">` + label + "</a>")
			i = start + n
		default:
			j := i + 1
			for j < len(s) && strings.IndexByte("\\`*[!", s[j]) < 0 {
				j++
			}
			b.WriteString(html.EscapeString(s[i:j]))
			i = j
		}
	}
	if strong {
		b.WriteString("</strong>")
	}
	return b.String()
}

// link parses "[text](url)" at the start of s: its text, url and length.
func link(s string) (text, url string, n int, ok bool) {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '[':
			depth++
		case ']':
			depth--
			if depth == 0 {
				if i+1 >= len(s) || s[i+1] != '(' {
					return "", "", 0, false
				}
				end := strings.IndexByte(s[i+2:], ')')
				if end < 0 {
					return "", "", 0, false
				}
				return s[1:i], s[i+2 : i+2+end], i + 2 + end + 1, true
			}
		}
	}
	return "", "", 0, false
}

// safeURL keeps relative links and http(s) links; anything else (a
// javascript: URL) becomes "#".
func safeURL(u string) string {
	u = strings.TrimSpace(u)
	lower := strings.ToLower(u)
	if i := strings.IndexAny(lower, ":/?#"); i >= 0 && lower[i] == ':' {
		if strings.HasPrefix(lower, "http:") || strings.HasPrefix(lower, "https:") {
			return u
		}
		return "#"
	}
	return u
}

// anchor makes a heading's id: lower case, letters and digits, the rest
// "-".
func anchor(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

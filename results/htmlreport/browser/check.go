package browser

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Need skips a test without a browser, except under CI=true (there a
// missing chromium fails it).
func Need(t testing.TB) {
	t.Helper()
	if _, err := Find(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI must install chromium: %v", err)
		}
		t.Skip(err)
	}
}

// Check opens a report.html in headless Chromium and checks
// what the issue asks of it; the cells must all be named in the page.
// With BM_HTML_SHOTS=DIR the screenshot is kept there as NAME.png.
func Check(t testing.TB, page, name string, cells []string, mustSay ...string) *Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	rep, err := Open(ctx, page)
	if err != nil {
		t.Fatal(err)
	}
	if d := os.Getenv("BM_HTML_SHOTS"); d != "" {
		os.WriteFile(filepath.Join(d, name+".png"), rep.Screenshot, 0o644)
	}
	t.Logf("%s: %d bytes; requests %v; screenshot %dx%d, %.1f%% ink, %d colours; legend %v; shown %d/%d/%d; tip %q; zoom %q -> %q (other %q); sort %q %s %v / %v; flame %q",
		name, fileSize(page), rep.Requests, rep.Width, rep.Height, 100*rep.Ink, rep.Colours, rep.Cells, rep.ShownBefore, rep.ShownOff, rep.ShownOn,
		rep.Tip, rep.ViewBefore, rep.ViewAfter, rep.OtherAfter, rep.SortHeader, rep.SortState, rep.SortAsc, rep.SortDesc, rep.FlameHits)
	if len(rep.ConsoleErrors) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(rep.ConsoleErrors, "\n"))
	}
	if len(rep.Requests) == 0 {
		t.Errorf("no request recorded at all: the network listener saw nothing, so 'no other request' would prove nothing")
	}
	if o := rep.OtherRequests(); len(o) > 0 {
		t.Errorf("the page made requests besides itself: %v", o)
	}
	for _, s := range append([]string{"Conclusion"}, mustSay...) {
		if !strings.Contains(rep.Text, s) {
			t.Errorf("the page does not say %q", s)
		}
	}
	for _, c := range cells {
		if !strings.Contains(rep.Text, c) {
			t.Errorf("cell %q is not in the page", c)
		}
	}
	// Not blank: a real page has text, tables and lines in many colours.
	if rep.Ink < 0.03 || rep.Colours < 50 {
		t.Errorf("the screenshot (%dx%d) looks blank: %.1f%% of it not background, %d colours", rep.Width, rep.Height, 100*rep.Ink, rep.Colours)
	}
	if len(rep.Cells) == 0 {
		t.Errorf("no cell in the legend")
	} else if rep.ShownBefore == 0 || rep.ShownOff != 0 || rep.ShownOn != rep.ShownBefore {
		t.Errorf("switching cell %s off and on: %d elements shown, then %d, then %d", rep.Cells[0], rep.ShownBefore, rep.ShownOff, rep.ShownOn)
	}
	if !regexp.MustCompile(`t = [0-9.]+ s`).MatchString(rep.Tip) || !regexp.MustCompile(`: [0-9]`).MatchString(rep.Tip) {
		t.Errorf("hovering a chart showed %q, want the second and a value per cell", rep.Tip)
	}
	if !rep.TipHidden {
		t.Errorf("the hover box stayed after the mouse left the chart")
	}
	if rep.ViewAfter == rep.ViewBefore || rep.ViewAfter == "" {
		t.Errorf("dragging across a chart did not zoom: viewBox %q then %q", rep.ViewBefore, rep.ViewAfter)
	}
	if rep.OtherAfter != "" && rep.OtherAfter != rep.ViewAfter {
		t.Errorf("the other charts did not follow the zoom: %q against %q", rep.OtherAfter, rep.ViewAfter)
	}
	if rep.SortHeader == "" {
		t.Errorf("no sortable table with a numeric column")
	} else {
		if rep.SortState != "ascending" {
			t.Errorf("sorting by %q: aria-sort %q", rep.SortHeader, rep.SortState)
		}
		if !ordered(rep.SortAsc, 1) || !ordered(rep.SortDesc, -1) {
			t.Errorf("sorting by %q: %v then %v, want ascending then descending", rep.SortHeader, rep.SortAsc, rep.SortDesc)
		}
	}
	if rep.FlameHits != "" && !regexp.MustCompile(`^[1-9][0-9]* frames match, [0-9.]+% of the graph$`).MatchString(rep.FlameHits) {
		t.Errorf("searching an embedded graph said %q, want frames matched and their share", rep.FlameHits)
	}
	return rep
}

func fileSize(p string) int64 {
	st, err := os.Stat(p)
	if err != nil {
		return -1
	}
	return st.Size()
}

var leadingNumber = regexp.MustCompile(`^[-+]?[0-9]+(\.[0-9]+)?`)

func ordered(vals []string, dir float64) bool {
	prev := 0.0
	for i, v := range vals {
		f, err := strconv.ParseFloat(leadingNumber.FindString(strings.ReplaceAll(v, ",", "")), 64)
		if err != nil {
			return false
		}
		if i > 0 && (f-prev)*dir < 0 {
			return false
		}
		prev = f
	}
	return len(vals) > 1
}

// Package browser opens a report page in headless Chromium (Debian's
// chromium package) through chromedp and records what a reader would
// meet: console errors, every request the page made, its text, a
// screenshot, and what the page's interactions did (a cell switched off, a
// hover, a sorted table, a zoom, a flame graph search). The report's tests
// use it; nothing in benchmatrix's commands imports it.
package browser

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/png"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Find returns the Chromium binary, or an error naming the package that
// provides it.
func Find() (string, error) {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no chromium on PATH (Debian: apt-get install chromium; make deps-test installs it)")
}

// Report is what opening the page showed.
type Report struct {
	URL           string
	ConsoleErrors []string // console.error, uncaught exceptions, error log entries (a blocked request)
	Requests      []string // every request the page made, the page itself included
	Text          string   // document.body.innerText
	Screenshot    []byte   // PNG of the whole page
	Width, Height int
	// Ink is the share of the screenshot's pixels that are not the
	// background's colour; Colours how many distinct colours it has.
	Ink     float64
	Colours int

	Cells []string // the legend's cells
	// Elements of the first cell shown before it was switched off, after,
	// and after it was switched on again.
	ShownBefore, ShownOff, ShownOn int
	Tip                            string // the hover box over the first chart
	TipHidden                      bool   // after the mouse left
	// The table sorted by a click on a numeric column's header: the
	// header's text, aria-sort, the column's values after one click and
	// after the second.
	SortHeader        string
	SortState         string
	SortAsc, SortDesc []string
	// The first time chart's viewBox before and after a drag across it,
	// and another chart's after (the time axis is shared).
	ViewBefore, ViewAfter, OtherAfter string
	// FlameHits is what a search for "fsync" in the first embedded graph said ("" when
	// the page has none).
	FlameHits string
}

// Open loads the page at path in a fresh headless Chromium (its own
// profile directory, removed after) and runs the interactions.
func Open(ctx context.Context, path string) (*Report, error) {
	exe, err := Find()
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	profile, err := os.MkdirTemp("", "bm-chromium-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(profile)
	// Chromium makes temporary directories of its own
	// (/tmp/org.chromium.Chromium.XXXXXX) and leaves them behind: they go
	// under the profile, removed with it.
	tmp := filepath.Join(profile, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return nil, err
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.UserDataDir(profile),
		chromedp.Env("TMPDIR="+tmp),
		chromedp.NoSandbox, // root in CI containers
		chromedp.Flag("disable-gpu", true),
		chromedp.WindowSize(1280, 900),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	bctx, cancel := chromedp.NewContext(actx)
	defer cancel()

	rep := &Report{URL: (&url.URL{Scheme: "file", Path: abs}).String()}
	var mu sync.Mutex
	if err := chromedp.Listen(bctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			rep.Requests = append(rep.Requests, e.Request.URL)
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeAssert {
				var parts []string
				for _, a := range e.Args {
					parts = append(parts, string(a.Value)+a.Description)
				}
				rep.ConsoleErrors = append(rep.ConsoleErrors, "console."+string(e.Type)+": "+strings.Join(parts, " "))
			}
		case *runtime.EventExceptionThrown:
			d := e.ExceptionDetails
			msg := d.Text
			if d.Exception != nil {
				msg += " " + d.Exception.Description
			}
			rep.ConsoleErrors = append(rep.ConsoleErrors, fmt.Sprintf("exception at %d:%d: %s", d.LineNumber, d.ColumnNumber, msg))
		case *cdplog.EventEntryAdded:
			if e.Entry.Level == cdplog.EntryLevelError {
				rep.ConsoleErrors = append(rep.ConsoleErrors, "log ("+string(e.Entry.Source)+"): "+e.Entry.Text+" "+e.Entry.URL)
			}
		}
	}); err != nil {
		return nil, fmt.Errorf("chromium: %w", err)
	}
	enable := chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		if _, err := cdp.Call(ctx, t, network.Enable, network.EnableParams{}); err != nil {
			return err
		}
		if _, err := cdp.Call(ctx, t, cdplog.Enable, cdp.Empty{}); err != nil {
			return err
		}
		_, err := cdp.Call(ctx, t, runtime.Enable, cdp.Empty{})
		return err
	})
	if err := chromedp.Do(bctx, enable, chromedp.Navigate(rep.URL),
		chromedp.WaitVisible(chromedp.CSS(`body[data-ready="1"]`))); err != nil {
		return nil, fmt.Errorf("chromium: open %s: %w", rep.URL, err)
	}
	step := func(what string, a chromedp.Action[chromedp.Void]) error {
		sctx, scancel := context.WithTimeout(bctx, time.Minute)
		defer scancel()
		if err := chromedp.Do(sctx, a); err != nil {
			return fmt.Errorf("chromium: %s: %w", what, err)
		}
		return nil
	}
	eval := func(js string) (string, error) {
		sctx, scancel := context.WithTimeout(bctx, time.Minute)
		defer scancel()
		return chromedp.Run(sctx, chromedp.Evaluate[string](js))
	}
	evalInt := func(js string) (int, error) {
		sctx, scancel := context.WithTimeout(bctx, time.Minute)
		defer scancel()
		return chromedp.Run(sctx, chromedp.Evaluate[int](js))
	}
	evalList := func(js string) ([]string, error) {
		sctx, scancel := context.WithTimeout(bctx, time.Minute)
		defer scancel()
		return chromedp.Run(sctx, chromedp.Evaluate[[]string](js))
	}

	if rep.Text, err = eval(`document.body.innerText`); err != nil {
		return nil, err
	}
	// The screenshot first, before any interaction changes the page.
	sctx, scancel := context.WithTimeout(bctx, 2*time.Minute)
	rep.Screenshot, err = chromedp.Run(sctx, chromedp.FullScreenshot(100))
	scancel()
	if err != nil {
		return nil, fmt.Errorf("chromium: screenshot: %w", err)
	}
	if err := rep.measureScreenshot(); err != nil {
		return nil, err
	}

	if rep.Cells, err = evalList(`Array.from(document.querySelectorAll("input[data-toggle]")).map(e => e.getAttribute("data-toggle"))`); err != nil {
		return nil, err
	}
	if len(rep.Cells) > 0 {
		shown := `(() => { const k = document.querySelector("input[data-toggle]").getAttribute("data-toggle");
			return Array.from(document.querySelectorAll("[data-k]")).filter(e => e.getAttribute("data-k") === k && getComputedStyle(e).display !== "none").length })()`
		if rep.ShownBefore, err = evalInt(shown); err != nil {
			return nil, err
		}
		if err := step("switch the first cell off", chromedp.Click(chromedp.CSS(`input[data-toggle]`))); err != nil {
			return nil, err
		}
		if rep.ShownOff, err = evalInt(shown); err != nil {
			return nil, err
		}
		if err := step("switch it on", chromedp.Click(chromedp.CSS(`input[data-toggle]`))); err != nil {
			return nil, err
		}
		if rep.ShownOn, err = evalInt(shown); err != nil {
			return nil, err
		}
	}

	// Hover the middle of the first time chart, then drag across it.
	if n, err := evalInt(`document.querySelectorAll("svg.chart[data-axis='time']").length`); err != nil {
		return nil, err
	} else if n > 0 {
		box, err := evalList(`(() => { const p = document.querySelector("svg.chart[data-axis='time'] svg.plot");
			p.scrollIntoView({block: "center"}); const r = p.getBoundingClientRect();
			return [String(r.left), String(r.top), String(r.width), String(r.height)] })()`)
		if err != nil {
			return nil, err
		}
		var l, t, w, h float64
		fmt.Sscan(strings.Join(box, " "), &l, &t, &w, &h)
		mx, my := l+w*0.55, t+h*0.5
		if err := step("hover", chromedp.MouseEvent(chromedp.MouseMoved, mx, my)); err != nil {
			return nil, err
		}
		if rep.Tip, err = eval(`document.getElementById("tip").hidden ? "" : document.getElementById("tip").innerText`); err != nil {
			return nil, err
		}
		if err := step("leave", chromedp.MouseEvent(chromedp.MouseMoved, 2, 2)); err != nil {
			return nil, err
		}
		hidden, err := eval(`String(document.getElementById("tip").hidden)`)
		if err != nil {
			return nil, err
		}
		rep.TipHidden = hidden == "true"
		view := `document.querySelectorAll("svg.chart[data-axis='time'] svg.plot")[%d].getAttribute("viewBox")`
		if rep.ViewBefore, err = eval(fmt.Sprintf(view, 0)); err != nil {
			return nil, err
		}
		x0, x1 := l+w*0.3, l+w*0.6
		if err := step("drag to zoom",
			chromedp.Steps(
				chromedp.MouseEvent(chromedp.MouseMoved, x0, my),
				chromedp.MouseEvent(chromedp.MousePressed, x0, my, chromedp.ButtonLeft, chromedp.ClickCount(1)),
				chromedp.MouseEvent(chromedp.MouseMoved, (x0+x1)/2, my, chromedp.ButtonLeft),
				chromedp.MouseEvent(chromedp.MouseMoved, x1, my, chromedp.ButtonLeft),
				chromedp.MouseEvent(chromedp.MouseReleased, x1, my, chromedp.ButtonLeft, chromedp.ClickCount(1)),
			)); err != nil {
			return nil, err
		}
		if rep.ViewAfter, err = eval(fmt.Sprintf(view, 0)); err != nil {
			return nil, err
		}
		if n > 1 {
			if rep.OtherAfter, err = eval(fmt.Sprintf(view, n-1)); err != nil {
				return nil, err
			}
		}
	}

	// Sort the first table that has a numeric column (the first column
	// whose cells all start with a number), by a click on its header.
	col, err := evalList(`(() => {
		for (const t of document.querySelectorAll("table.sortable")) {
			const ths = t.querySelectorAll("thead th"), rows = t.tBodies[0].rows;
			if (rows.length < 2) continue;
			for (let i = 1; i < ths.length; i++) {
				const vals = Array.from(rows).map(r => r.cells[i] ? r.cells[i].textContent.trim() : "");
				if (vals.every(v => /^[-+]?\d/.test(v)) && new Set(vals).size > 1) {
					t.setAttribute("data-test-sort", "1"); ths[i].setAttribute("data-test-th", "1");
					return [ths[i].textContent, String(i)];
				}
			}
		}
		return [];
	})()`)
	if err != nil {
		return nil, err
	}
	if len(col) == 2 {
		rep.SortHeader = col[0]
		values := fmt.Sprintf(`Array.from(document.querySelector("table[data-test-sort]").tBodies[0].rows).map(r => r.cells[%s].textContent.trim())`, col[1])
		if err := step("sort", chromedp.Steps(
			chromedp.Evaluate[chromedp.Void](`document.querySelector("th[data-test-th]").scrollIntoView({block: "center"})`),
			chromedp.Click(chromedp.CSS(`th[data-test-th]`)))); err != nil {
			return nil, err
		}
		if rep.SortState, err = eval(`document.querySelector("th[data-test-th]").getAttribute("aria-sort") || ""`); err != nil {
			return nil, err
		}
		if rep.SortAsc, err = evalList(values); err != nil {
			return nil, err
		}
		if err := step("sort again", chromedp.Click(chromedp.CSS(`th[data-test-th]`))); err != nil {
			return nil, err
		}
		if rep.SortDesc, err = evalList(values); err != nil {
			return nil, err
		}
	}

	// Search the first embedded graph.
	if n, err := evalInt(`document.querySelectorAll(".flamebox").length`); err != nil {
		return nil, err
	} else if n > 0 {
		if err := step("open a graph", chromedp.Steps(
			chromedp.Evaluate[chromedp.Void](`document.querySelector(".flamebox").open = true; document.querySelector(".flamebox").scrollIntoView()`),
			chromedp.SendKeys(chromedp.CSS(`.flamebox .flamesearch`), "fsync"))); err != nil {
			return nil, err
		}
		if rep.FlameHits, err = eval(`document.querySelector(".flamebox .flamehits").textContent`); err != nil {
			return nil, err
		}
	}
	// Errors and requests may still arrive a moment after the last action.
	time.Sleep(200 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	rep.ConsoleErrors = append([]string(nil), rep.ConsoleErrors...)
	rep.Requests = append([]string(nil), rep.Requests...)
	return rep, nil
}

// OtherRequests are the requests to anything but the page itself.
func (r *Report) OtherRequests() []string {
	var out []string
	for _, u := range r.Requests {
		if u != r.URL {
			out = append(out, u)
		}
	}
	return out
}

func (r *Report) measureScreenshot() error {
	img, err := png.Decode(bytes.NewReader(r.Screenshot))
	if err != nil {
		return fmt.Errorf("screenshot: %w", err)
	}
	b := img.Bounds()
	r.Width, r.Height = b.Dx(), b.Dy()
	bg := rgb(img, b.Min.X+b.Dx()/2, b.Max.Y-1) // the page's background, at the bottom
	colours := map[[3]uint32]bool{}
	ink, total := 0, 0
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			c := rgb(img, x, y)
			total++
			if c != bg {
				ink++
			}
			if len(colours) < 100000 {
				colours[c] = true
			}
		}
	}
	if total > 0 {
		r.Ink = float64(ink) / float64(total)
	}
	r.Colours = len(colours)
	return nil
}

func rgb(img image.Image, x, y int) [3]uint32 {
	cr, cg, cb, _ := img.At(x, y).RGBA()
	return [3]uint32{cr >> 8, cg >> 8, cb >> 8}
}

package results

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"benchmatrix/record"
)

// WriteBenchFormat writes every successful cell run of r (each repeat) in
// the Go benchmark format (golang.org/design/14313-benchmark-format), so
// that benchstat and the rest of the Go tooling read benchmatrix results:
//
//	goos: linux
//	cpu: AMD EPYC 7B13
//	experiment: flush
//	server: mariadb 10.11.6
//	workload: oltp_insert
//	Unit tps better=higher
//	BenchmarkMatrix/scenario=b1e1/threads=8 273000 109890 ns/txn 9100.00 tps ...
//
// The iteration count is the number of transactions; ns/txn is wall time
// per transaction (1e9/tps, Go's ns/op). Only keys that define what was
// measured are file configuration, because benchstat puts results with
// different configuration into different tables: host name and kernel are
// left out so that runs on two machines still line up.
func WriteBenchFormat(w io.Writer, r *record.Run) error {
	bw := bufio.NewWriter(w)
	config := func(key, value string) {
		value = oneLine(value)
		if value != "" {
			fmt.Fprintf(bw, "%s: %s\n", key, value)
		}
	}
	if r.Host.Kernel != "" {
		// The kernel release is read from /proc: the run was on Linux.
		config("goos", "linux")
	}
	config("cpu", r.Host.CPUModel)
	if r.Host.Cores > 0 {
		config("cores", strconv.Itoa(r.Host.Cores))
	}
	config("experiment", r.Experiment)
	config("server", strings.TrimSpace(string(r.Server.Flavor)+" "+r.Server.Version))
	config("oltp-engine", EngineVersion)
	for _, u := range benchUnits {
		fmt.Fprintf(bw, "Unit %s better=%s\n", u.unit, u.better)
	}
	workload := ""
	for i := range r.Cells {
		c := &r.Cells[i]
		if c.Status != record.CellOK || c.Result == nil || c.Result.Events <= 0 || c.Result.Elapsed <= 0 {
			continue
		}
		res := c.Result
		wl := c.Workload.Workload()
		if wl != workload {
			// A configuration line holds for the results after it.
			config("workload", wl)
			workload = wl
		}
		tps := res.TPS()
		fmt.Fprintf(bw, "%s %d %s ns/txn %s tps %s qps %s p95-ms %s p99-ms\n",
			BenchName(c), res.Events,
			strconv.FormatFloat(1e9/tps, 'f', 1, 64),
			strconv.FormatFloat(tps, 'f', 2, 64),
			strconv.FormatFloat(res.QPS(), 'f', 2, 64),
			strconv.FormatFloat(res.Latency.P95, 'f', 3, 64),
			strconv.FormatFloat(res.Latency.P99, 'f', 3, 64))
	}
	return bw.Flush()
}

var benchUnits = []struct{ unit, better string }{
	{"ns/txn", "lower"},
	{"tps", "higher"},
	{"qps", "higher"},
	{"p95-ms", "lower"},
	{"p99-ms", "lower"},
}

// BenchName is a cell's benchmark name: BenchmarkMatrix followed by one
// key=value element per name part, "scenario=b1e1/threads=8" for the cell
// b1e1/threads=8, so that benchstat can project on any of them (-col
// /threads). A name part without "=" (a scenario, or a custom cell name)
// becomes scenario= or cell=. Whitespace becomes "_".
func BenchName(c *record.Cell) string {
	var parts []string
	rest := c.Name
	if c.Scenario != "" && (rest == c.Scenario || strings.HasPrefix(rest, c.Scenario+"/")) {
		parts = append(parts, "scenario="+c.Scenario)
		rest = strings.TrimPrefix(strings.TrimPrefix(rest, c.Scenario), "/")
	}
	if rest != "" {
		for _, p := range strings.Split(rest, "/") {
			if !strings.Contains(p, "=") {
				p = "cell=" + p
			}
			parts = append(parts, p)
		}
	}
	for i, p := range parts {
		parts[i] = strings.Join(strings.Fields(p), "_")
	}
	name := "BenchmarkMatrix"
	if len(parts) > 0 {
		name += "/" + strings.Join(parts, "/")
	}
	// benchfmt reads a trailing -N as GOMAXPROCS; keep a value such as
	// "10-20" whole.
	if procsSuffix.MatchString(name) {
		name = name[:strings.LastIndex(name, "-")] + "_" + name[strings.LastIndex(name, "-")+1:]
	}
	return name
}

var procsSuffix = regexp.MustCompile(`-[0-9]+$`)

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

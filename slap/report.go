package slap

import (
	"fmt"
	"strings"
	"time"
)

// secs is mariadb-slap's "%ld.%03ld" of whole milliseconds.
func secs(d time.Duration) string {
	ms := d.Milliseconds()
	return fmt.Sprintf("%d.%03d", ms/1000, ms%1000)
}

// Report is the conclusion in mariadb-slap's layout.
func (con Conclusion) Report() string {
	var b strings.Builder
	b.WriteString("Benchmark\n")
	if con.Engine != "" {
		fmt.Fprintf(&b, "\tRunning for engine %s\n", con.Engine)
	}
	fmt.Fprintf(&b, "\tAverage number of seconds to run all queries: %s seconds\n", secs(con.Avg))
	fmt.Fprintf(&b, "\tMinimum number of seconds to run all queries: %s seconds\n", secs(con.Min))
	fmt.Fprintf(&b, "\tMaximum number of seconds to run all queries: %s seconds\n", secs(con.Max))
	fmt.Fprintf(&b, "\tNumber of clients running queries: %d\n", con.Users)
	fmt.Fprintf(&b, "\tAverage number of queries per client: %d\n", con.AvgRows)
	b.WriteString("\n")
	return b.String()
}

// CSVLine is the conclusion as mariadb-slap's --csv line: engine, load
// type, average, minimum and maximum seconds, clients, queries per client.
func (con Conclusion) CSVLine() string {
	return fmt.Sprintf("%s,%s,%s,%s,%s,%d,%d\n", con.Engine, con.LoadType, secs(con.Avg), secs(con.Min), secs(con.Max), con.Users, con.AvgRows)
}

package runner

import (
	"context"
	"strings"
	"testing"

	"benchmatrix/exitcode"
	"benchmatrix/experiment"
	"benchmatrix/observe"
	"benchmatrix/results"
)

// An [[observe.metric]] named like a column benchmatrix writes itself in
// intervals.csv (the workload's, the sampler's, a node's) is refused by
// the resolution plan and run share, naming its key and line; another
// name resolves.
func TestMetricNamedLikeABuiltInColumn(t *testing.T) {
	t.Parallel()
	for _, name := range []string{results.IntervalColumns[4], observe.Columns()[0], "answered", "my_metric"} {
		src := "[workload]\nname = \"oltp_insert\"\n[[observe.metric]]\nname = \"" + name + "\"\nsql = \"SELECT 1\"\n"
		m, err := experiment.Parse("m.toml", src)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Resolve(context.Background(), m, experiment.Flags{Flavor: "mariadb"})
		if name == "my_metric" {
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
			continue
		}
		if exitcode.Of(err) != exitcode.Usage || err == nil || !strings.Contains(err.Error(), "line 4: observe.metric.name") ||
			!strings.Contains(err.Error(), "\""+name+"\" is a column benchmatrix writes itself") {
			t.Errorf("%s: got %v (exit %d), want a refusal naming observe.metric.name on line 4", name, err, exitcode.Of(err))
		}
	}
}

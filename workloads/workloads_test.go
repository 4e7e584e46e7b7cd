package workloads

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"benchmatrix/engine"
)

// Every engine in the list holds to what the runner, the planner and the
// record expect of it: a descriptor with every function, its workloads its
// own, each workload resolving from the engine's defaults to options of
// that name that pass their check and come back unchanged through run.json,
// and run controls that WithCommon sets.
func TestEnginesConform(t *testing.T) {
	seen := map[string]string{}
	for _, d := range Engines {
		if d.Name == "" || d.IsKey == nil || d.Applies == nil || d.CheckKey == nil || d.Resolve == nil || d.Decode == nil || d.New == nil {
			t.Errorf("engine %q: a descriptor function is missing", d.Name)
			continue
		}
		if len(d.Workloads) == 0 {
			t.Errorf("engine %s runs no workload", d.Name)
		}
		for _, w := range d.Workloads {
			if other, dup := seen[w]; dup {
				t.Errorf("workload %s is both %s's and %s's", w, other, d.Name)
			}
			seen[w] = d.Name
			o, err := d.Resolve(w, nil, 7*time.Second, 0)
			if err != nil {
				t.Errorf("%s/%s: resolve: %v", d.Name, w, err)
				continue
			}
			if o.Name() != w || o.Common().Time != 7*time.Second {
				t.Errorf("%s/%s: resolved to %s, time %v", d.Name, w, o.Name(), o.Common().Time)
			}
			if err := o.Check(); err != nil {
				t.Errorf("%s/%s: its defaults do not pass its check: %v", d.Name, w, err)
			}
			if o.Data().Shape == "" || o.Estimate() <= 0 || o.Describe() == "" {
				t.Errorf("%s/%s: data shape %q, estimate %v, description %q", d.Name, w, o.Data().Shape, o.Estimate(), o.Describe())
			}
			b, err := json.Marshal(engine.Spec{Engine: d.Name, Options: o})
			if err != nil {
				t.Fatal(err)
			}
			var back engine.Spec
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if err := Engines.Bind(&back); err != nil || back.Engine != d.Name || !reflect.DeepEqual(back.Options, o) {
				t.Errorf("%s/%s: through run.json: %v, %s %+v", d.Name, w, err, back.Engine, back.Options)
			}
			c := o.Common()
			c.Threads, c.Seed, c.Grace = 3, 42, time.Second
			if got := o.WithCommon(c).Common(); got.Threads != 3 || got.Seed != 42 || got.Grace != time.Second {
				t.Errorf("%s/%s: WithCommon set %+v, reads back %+v", d.Name, w, c, got)
			}
			if d.New(engine.Env{}) == nil {
				t.Errorf("%s: New gives no Workload", d.Name)
			}
		}
	}
}

package engine

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// fakeOptions are a test engine's options.
type fakeOptions struct {
	Workload string        `json:"workload"`
	Threads  int           `json:"threads"`
	Time     time.Duration `json:"time"`
	Rows     int64         `json:"rows"`
}

func (o fakeOptions) Name() string { return o.Workload }
func (o fakeOptions) Common() Common {
	return Common{Threads: o.Threads, Time: o.Time}
}
func (o fakeOptions) WithCommon(c Common) Options {
	o.Threads, o.Time = c.Threads, c.Time
	return o
}
func (o fakeOptions) Data() Data {
	return Data{Shape: "fake", Tables: []string{"a", "b"}, TotalRows: o.Rows}
}
func (o fakeOptions) Check() error            { return nil }
func (o fakeOptions) Estimate() time.Duration { return o.Time }
func (o fakeOptions) Describe() string        { return o.Workload }

var fake = &Descriptor{Name: "fake", Workloads: []string{"fake_a", "fake_b"}, IsKey: func(k string) bool { return k == "rows" },
	Decode: func(b []byte) (Options, error) {
		var o fakeOptions
		err := json.Unmarshal(b, &o)
		return o, err
	}}

// A spec's JSON is its options'; decoded, it holds them unbound until the
// registry binds them to the engine its workload names.
func TestSpecBindsToItsEngine(t *testing.T) {
	reg := Registry{fake}
	s := Spec{Engine: "fake", Options: fakeOptions{Workload: "fake_b", Threads: 4, Time: time.Second, Rows: 10}}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"workload":"fake_b","threads":4,"time":1000000000,"rows":10}`; string(b) != want {
		t.Fatalf("JSON %s, want %s", b, want)
	}
	var back Spec
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Bound() || back.Workload() != "fake_b" || back.Common().Threads != 0 {
		t.Fatalf("decoded spec %+v: want unbound, workload fake_b", back)
	}
	if again, _ := json.Marshal(back); string(again) != string(b) {
		t.Errorf("unbound spec writes %s, want %s", again, b)
	}
	if err := reg.Bind(&back); err != nil {
		t.Fatal(err)
	}
	if back.Engine != "fake" || back.Options != s.Options || back.Data().Rows() != 10 {
		t.Errorf("bound %+v, want %+v", back, s)
	}
	longer := back.With(func(c *Common) { c.Time = time.Minute })
	if longer.Common().Time != time.Minute || back.Common().Time != time.Second {
		t.Errorf("With: %v, and the original %v", longer.Common().Time, back.Common().Time)
	}
	unknown := RawSpec([]byte(`{"workload":"nope"}`))
	if err := reg.Bind(&unknown); err == nil || !strings.Contains(err.Error(), `workload "nope": no engine runs it`) {
		t.Errorf("unknown workload: %v", err)
	}
	var null Spec
	if err := json.Unmarshal([]byte("null"), &null); err != nil || !null.IsZero() || reg.Bind(&null) != nil {
		t.Errorf("null spec: %v %+v", err, null)
	}
}

func TestDataRows(t *testing.T) {
	for _, tc := range []struct {
		d    Data
		want int64
	}{
		{Data{Tables: []string{"t1", "t2"}, RowsPerTable: 100}, 200},
		{Data{Tables: []string{"t1", "t2"}, RowsPerTable: 100, Empty: true}, 0},
		{Data{Tables: []string{"w", "d", "c"}, RowsPerTable: 1, TotalRows: 5000}, 5000},
		{Data{}, 0},
	} {
		if got := tc.d.Rows(); got != tc.want {
			t.Errorf("%+v: %d rows, want %d", tc.d, got, tc.want)
		}
	}
}

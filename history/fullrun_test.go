package history

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"benchmatrix/exitcode"
)

// Downgrade makes a history the previous schema's (before FullRunSchema):
// what schema 2 added goes, the runs stay. Its tables are then exactly
// those migrations[:FullRunSchema-1] create (the steps are append-only).
func downgrade(t *testing.T, st *Store) {
	t.Helper()
	for _, q := range []string{"DROP TABLE bmh_run_json", "DELETE FROM bmh_schema WHERE version >= 2"} {
		if _, err := st.db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
}

func TestFullRunKeptAndReadBack(t *testing.T) {
	ctx := context.Background()
	st, _ := openTemp(t)
	r := fakeRun(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), 1000, "1000")
	a, err := st.Add(ctx, r, Meta{Branch: "main"})
	if err != nil {
		t.Fatal(err)
	}
	back, err := st.FullRun(ctx, a.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if RunID(back) != a.RunID || contentHash(back) != contentHash(r) || len(back.Cells) != 3 ||
		!reflect.DeepEqual(back.Cells[0].Effective, r.Cells[0].Effective) || back.Cells[2].Result.Events != r.Cells[2].Result.Events {
		t.Fatalf("read back: %+v\nwant %+v", back, r)
	}
	j, z, err := st.FullRunBytes(ctx)
	if err != nil || j == 0 || z == 0 || z >= j {
		t.Fatalf("sizes: json %d, stored %d, %v", j, z, err)
	}
	if _, err := st.FullRun(ctx, "ffffffffffff"); exitcode.Of(err) != exitcode.Usage {
		t.Fatalf("no such run: %v", err)
	}
}

// A history of the previous schema is migrated in place: every run is
// still there; comparing against one recorded before says so and names
// the schema that started keeping full runs; adding it again keeps it.
func TestMigrationKeepsRunsRecordedBefore(t *testing.T) {
	ctx := context.Background()
	st, path := openTemp(t)
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	var ids []string
	for i := range 3 {
		a, err := st.Add(ctx, fakeRun(t0.Add(time.Duration(i)*time.Hour), 1000, "1000"), Meta{Branch: "main"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, a.RunID)
	}
	downgrade(t, st)
	st.Close()

	st, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var v int
	if err := st.db.QueryRow("SELECT MAX(version) FROM bmh_schema").Scan(&v); err != nil || v != SchemaVersion {
		t.Fatalf("schema after reopening: %d %v, want %d", v, err, SchemaVersion)
	}
	runs, err := st.Runs(ctx)
	if err != nil || len(runs) != 3 || runs[0].FullRun {
		t.Fatalf("runs after the migration: %+v %v, want 3, not kept in full", runs, err)
	}
	ss, err := st.ListSeries(ctx, nil)
	if err != nil || len(ss) != 1 || ss[0].Runs != 3 {
		t.Fatalf("series after the migration: %+v %v", ss, err)
	}
	base, err := st.FindBase(ctx, BaseQuery{Experiment: "flush", Branch: "main", NewID: ids[2], NewStarted: t0.Add(2 * time.Hour)})
	if err != nil || base.ID != ids[1] {
		t.Fatalf("base of the newest main run: %+v %v, want the one before it (%s)", base, err, ids[1])
	}
	_, err = st.FullRun(ctx, base.ID)
	var nk *NotKeptError
	if !errors.As(err, &nk) || exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), "history schema 2") || nk.Since == "" {
		t.Fatalf("a run recorded before: %v", err)
	}
	a, err := st.Add(ctx, fakeRun(t0.Add(time.Hour), 1000, "1000"), Meta{Branch: "main"})
	if err != nil || !a.Duplicate || len(a.Notes) != 1 || !strings.Contains(a.Notes[0], "kept now") {
		t.Fatalf("adding it again: %+v %v", a, err)
	}
	if _, err := st.FullRun(ctx, base.ID); err != nil {
		t.Fatal(err)
	}
	if a, err := st.Add(ctx, fakeRun(t0.Add(time.Hour), 1000, "1000"), Meta{}); err != nil || !a.Duplicate || len(a.Notes) != 0 {
		t.Fatalf("a third time: %+v %v, want a no-op", a, err)
	}
	if _, err := st.Remove(ctx, ids[1]); err != nil {
		t.Fatal(err)
	}
	if j, _, err := st.FullRunBytes(ctx, ids[1]); err != nil || j != 0 {
		t.Fatalf("rm left its full run: %d %v", j, err)
	}
}

func TestFindBase(t *testing.T) {
	ctx := context.Background()
	st, _ := openTemp(t)
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	add := func(h int, m Meta) string {
		a, err := st.Add(ctx, fakeRun(t0.Add(time.Duration(h)*time.Hour), 1000, "1000"), m)
		if err != nil {
			t.Fatal(err)
		}
		return a.RunID
	}
	m1 := add(0, Meta{Branch: "main", Commit: "c1"})
	m2 := add(1, Meta{Branch: "main", Commit: "c2", Label: "nightly"})
	pr := add(2, Meta{Branch: "feature", Commit: "c3"})
	m3 := add(3, Meta{Branch: "main", Commit: "c4"})
	newAt := func(h int) BaseQuery {
		return BaseQuery{Experiment: "flush", Branch: "main", NewID: "n", NewStarted: t0.Add(time.Duration(h) * time.Hour)}
	}
	cases := []struct {
		name string
		q    BaseQuery
		want string
	}{
		{"newest main before the new run", newAt(3), m2},
		{"a later run (the new one not recorded)", newAt(5), m3},
		{"the new run itself is the newest main run", BaseQuery{Experiment: "flush", Branch: "main", NewID: m3, NewStarted: t0.Add(3 * time.Hour)}, m2},
		{"by label", BaseQuery{Experiment: "flush", Label: "nightly", NewID: "n", NewStarted: t0.Add(9 * time.Hour)}, m2},
		{"by branch", BaseQuery{Experiment: "flush", Branch: "feature", NewID: "n", NewStarted: t0.Add(9 * time.Hour)}, pr},
		{"by run id prefix", BaseQuery{RunID: m1[:6]}, m1},
	}
	for _, c := range cases {
		got, err := st.FindBase(ctx, c.q)
		if err != nil || got.ID != c.want {
			t.Errorf("%s: %+v %v, want %s", c.name, got, err, c.want)
		}
	}
	for _, c := range []struct {
		q    BaseQuery
		want []string
	}{
		{newAt(0), []string{`branch main`, "feature (1), main (3)", "nightly (1)"}},
		{BaseQuery{Experiment: "other", Branch: "main", NewStarted: t0.Add(9 * time.Hour)}, []string{`experiment "other"`, "its experiments: flush"}},
		{BaseQuery{Experiment: "flush", Branch: "release", NewStarted: t0.Add(9 * time.Hour)}, []string{"branch release", "main (3)"}},
		{BaseQuery{RunID: "abcdef"}, []string{"no such run"}},
	} {
		_, err := st.FindBase(ctx, c.q)
		if exitcode.Of(err) != exitcode.Usage {
			t.Errorf("%+v: %v, want a usage error", c.q, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%+v: %v\nwant it to say %q", c.q, err, w)
			}
		}
	}
}

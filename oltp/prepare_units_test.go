package oltp

import "testing"

// The load queue covers every id of every table exactly once, in whole
// id blocks, and shares out evenly over the connections.
func TestLoadUnits(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name            string
		workload        string
		tables, threads int
		size            int
		wantParts       int  // per table
		autoIncOff      bool // oltp_insert loads no rows then
	}{
		{"as many tables as threads", "oltp_read_write", 4, 2, 100000, 1, false},
		{"one table, more threads", "oltp_read_write", 1, 8, 100000, 8, false},
		{"3 tables on 2 threads", "oltp_read_write", 3, 2, 100000, 2, false},
		{"5 tables on 8 threads", "oltp_read_write", 5, 8, 100000, 8, false},
		{"fewer blocks than threads", "oltp_read_write", 1, 8, 12000, 3, false},
		{"a table smaller than a block", "oltp_read_write", 1, 4, 10, 1, false},
		{"no rows to load", "oltp_insert", 2, 4, 100000, 1, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := DefaultOptions()
			o.Workload, o.Tables, o.Threads, o.TableSize = c.workload, c.tables, c.threads, c.size
			o.AutoInc = !c.autoIncOff
			l := &loader{o: &o}
			units := l.units(tableNumbers(&o), c.threads)
			if len(units) != c.tables*c.wantParts {
				t.Fatalf("%d units, want %d tables × %d parts", len(units), c.tables, c.wantParts)
			}
			rows := loadRows(&o)
			next := map[int]int{} // table → next id expected
			for _, u := range units {
				n := u.tbl.n
				if next[n] == 0 {
					next[n] = 1
					if got := int(u.tbl.left.Load()); got != c.wantParts {
						t.Errorf("sbtest%d: %d parts left, want %d", n, got, c.wantParts)
					}
				}
				if u.first != next[n] || u.last < u.first-1 {
					t.Fatalf("sbtest%d: unit %d..%d after id %d", n, u.first, u.last, next[n]-1)
				}
				if u.first%loadBlock != 1 {
					t.Errorf("sbtest%d: unit starts at %d, not at a block's start", n, u.first)
				}
				next[n] = u.last + 1
			}
			for n := 1; n <= c.tables; n++ {
				if next[n]-1 != rows {
					t.Errorf("sbtest%d: units end at id %d, want %d", n, next[n]-1, rows)
				}
			}
		})
	}
}

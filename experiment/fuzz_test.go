package experiment

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse: the decoder and Resolve never panic, and every failure is an *Error
// listing problems (the CLI maps it to exit code 2).
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("../manifests/*.toml")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(string(b))
		}
	}
	f.Add("[experiment]\nexclude = [{ scenario = \"a\" }]\n[workload]\nname = \"oltp_insert\"\n[scenarios]\na = { x = 1 }\n")
	f.Add("[axes]\nthreads = [1, \"x\", 2.5, true]\n")
	f.Fuzz(func(t *testing.T, src string) {
		m, err := Parse("fuzz.toml", src)
		var p *Plan
		if err == nil {
			p, err = Resolve(m, Flags{})
		}
		if err != nil {
			var me *Error
			if !errors.As(err, &me) || len(me.Problems) == 0 {
				t.Fatalf("error is not a problem list: %T %v", err, err)
			}
			return
		}
		if len(p.Cells) == 0 {
			t.Fatal("a valid manifest expands to no cell")
		}
	})
}

package slap

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// An interrupted benchmatrix slap (SIGINT: its context ends) drops the
// schema it created, as the whole run would have; with --no-drop it keeps
// it, as mariadb-slap does.
func TestInterruptDropsTheSchemaItMade(t *testing.T) {
	_, db, conn := startSandbox(t)
	schemaExists := func(name string) bool {
		var n int
		if err := db.QueryRow("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ?", name).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n > 0
	}
	for _, c := range []struct {
		schema string
		extra  []string
		kept   bool
	}{
		{"slapint", nil, false},
		{"slapkeep", []string{"--no-drop"}, true},
	} {
		args := append(append([]string{}, conn...), "--auto-generate-sql", "--concurrency=2", "--number-of-queries=100000000",
			"--iterations=1", "--create-schema="+c.schema)
		args = append(args, c.extra...)
		ctx, cancel := context.WithCancel(context.Background())
		var out, errb bytes.Buffer
		done := make(chan int, 1)
		go func() { done <- Main(ctx, args, strings.NewReader(""), &out, &errb) }()
		deadline := time.Now().Add(2 * time.Minute)
		for !schemaExists(c.schema) {
			if time.Now().After(deadline) {
				cancel()
				t.Fatalf("%s: the load never started: %s", c.schema, errb.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
		cancel()
		select {
		case code := <-done:
			if code != 130 {
				t.Errorf("%s: exit %d, want 130: %s", c.schema, code, errb.String())
			}
		case <-time.After(2 * time.Minute):
			t.Fatalf("%s: did not stop", c.schema)
		}
		if got := schemaExists(c.schema); got != c.kept {
			t.Errorf("%s: schema there after the interrupt: %v, want %v (stderr %q)", c.schema, got, c.kept, errb.String())
		}
		if c.kept {
			if _, err := db.Exec("DROP SCHEMA " + c.schema); err != nil {
				t.Fatal(err)
			}
		}
	}
}

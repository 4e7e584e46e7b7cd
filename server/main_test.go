package server

import (
	"os"
	"testing"
)

// TestMain removes the golden datadirs the tests' sandboxes left.
func TestMain(m *testing.M) {
	code := m.Run()
	Cleanup()
	os.Exit(code)
}

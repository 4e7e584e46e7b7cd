package runner

import (
	"os"
	"testing"

	"benchmatrix/server"
)

// TestMain removes the golden datadirs the tests' sandboxes left.
func TestMain(m *testing.M) {
	code := m.Run()
	server.Cleanup()
	os.Exit(code)
}

package tpcc

import (
	"os"
	"testing"

	"benchmatrix/server"
)

// TestMain removes the golden datadirs the tests' sandboxes made (one per
// test process, server.Cleanup), as the command does when it exits.
func TestMain(m *testing.M) {
	code := m.Run()
	server.Cleanup()
	os.Exit(code)
}

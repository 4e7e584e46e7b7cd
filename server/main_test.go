package server

import (
	"io"
	"log"
	"os"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// TestMain removes the golden datadirs the tests' sandboxes left. As the
// command does, it silences the MySQL driver's log of the connections that
// killed and stopped servers drop (the tests check those errors
// themselves).
func TestMain(m *testing.M) {
	_ = mysql.SetLogger(log.New(io.Discard, "", 0))
	code := m.Run()
	Cleanup()
	os.Exit(code)
}

package runner

import (
	"io"
	"log"
	"os"
	"testing"

	"github.com/go-sql-driver/mysql"

	"benchmatrix/cache"
	"benchmatrix/server"
)

// TestMain removes the golden datadirs the tests' sandboxes left. As the
// command does, it silences the MySQL driver's log of the connections that
// killed and stopped servers drop (the tests check those errors
// themselves).
func TestMain(m *testing.M) {
	_ = mysql.SetLogger(log.New(io.Discard, "", 0))
	// No test run reaches the user's data cache; the cache's own tests
	// name theirs (datacache_test.go).
	os.Setenv(cache.EnvVar, cache.Off)
	code := m.Run()
	server.Cleanup()
	os.Exit(code)
}

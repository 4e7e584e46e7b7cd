// Package server starts, reconfigures and stops the MySQL-family servers a
// benchmark matrix runs against. Every provider (sandbox, docker, external;
// each described in package catalog) sits behind the Server interface, so
// the runner never knows which one it drives; what a provider can do beyond
// it is a declared capability with an interface of its own (capability.go).
package server

import (
	"context"
	"fmt"
	"strings"

	"benchmatrix/record/parts"

	"github.com/go-sql-driver/mysql"
)

// Info describes a running server: parts.ServerInfo, in run.json.
type Info = parts.ServerInfo

// Setting is one server variable and the value wanted for it, as text.
type Setting struct {
	Name  string
	Value string
}

// Server is a MySQL-family server the runner can configure.
type Server interface {
	// Info reports what the server is and where it listens.
	Info() Info
	// Endpoint returns a client configuration for a fresh connection. The
	// caller may modify the copy (DBName, timeouts) freely.
	Endpoint() *mysql.Config
	// Restart stops the server and starts it again with the given startup
	// options on top of the provider's base configuration. Data is kept.
	Restart(ctx context.Context, startup []Setting) error
	// Startup returns the startup options in effect (those given to the last
	// Start or Restart).
	Startup() []Setting
	// LogTail returns the last n lines of the server's error log, if known.
	LogTail(n int) string
	// Stop shuts the server down and releases everything it owns.
	Stop(ctx context.Context) error
}

// OptionName turns a variable name into its command-line form
// (innodb_flush_log_at_trx_commit → innodb-flush-log-at-trx-commit).
func OptionName(name string) string {
	return strings.ReplaceAll(strings.ToLower(name), "_", "-")
}

// StartupFlag renders a setting as a server command-line option. Boolean
// words map to the enable/skip forms the servers understand.
func StartupFlag(s Setting) string {
	opt := OptionName(s.Name)
	switch strings.ToLower(s.Value) {
	case "true":
		return "--" + opt
	case "false":
		return "--skip-" + opt
	}
	return fmt.Sprintf("--%s=%s", opt, s.Value)
}

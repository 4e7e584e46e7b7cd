package catalog

// Sandbox is a private mysqld/mariadbd that benchmatrix starts itself from
// the binary on PATH (or [server] binary), in a temporary directory (or
// under [server] tmpdir), on a free loopback port.
const Sandbox ProviderName = "sandbox"

var sandboxProvider = Descriptor{
	Name: Sandbox,
	Doc:  "a private server started from the mariadbd/mysqld on PATH",
	Keys: []string{"binary", "tmpdir", "cache", "cache_size"}, // cache: the data cache across runs
	Caps: Caps(Liveness, PID, Logs, Snapshots, Restarts, Limits, Profiles, Topologies),
	Owns: sandboxOwns,
}

// sandboxOwns: the sandbox's private directory, port and socket, and its
// promise to listen on 127.0.0.1 only.
var sandboxOwns = map[string]string{
	"datadir":         "a private directory per run",
	"port":            "a free loopback port",
	"socket":          "a socket in its private directory",
	"bind_address":    "it listens on 127.0.0.1 only",
	"skip_networking": "benchmatrix connects over TCP",
	"pid_file":        "in its private directory",
	"log_error":       "in its private directory, read per cell",
	"tmpdir":          "a private directory ([server] tmpdir moves the whole sandbox)",
	"basedir":         "from the server binary",
	"user":            "the server runs as the invoking user",
}

package catalog

// Sandbox is a private mysqld/mariadbd that benchmatrix starts itself from
// the binary on PATH (or [server] binary), in a temporary directory (or
// under [server] tmpdir), on a free loopback port.
const Sandbox ProviderName = "sandbox"

var sandboxProvider = Descriptor{
	Name: Sandbox,
	Doc:  "a private server started from the mariadbd/mysqld on PATH",
	Keys: []string{"binary", "tmpdir"},
	Caps: Caps(Liveness, PID, Logs, Snapshots, Restarts),
}

package catalog

// External is a server benchmatrix does not own, reached by a DSN: only
// dynamic settings are applied, and every changed global is restored.
const External ProviderName = "external"

// PasswordEnv holds an external server's password, so that it need not be
// written in a DSN.
const PasswordEnv = "BENCHMATRIX_PASSWORD"

var externalProvider = Descriptor{
	Name: External,
	Doc:  "an existing server reached by a DSN (password in $" + PasswordEnv + ")",
	Keys: []string{"dsn", "dsns"},
	Caps: Caps(RestoresGlobals, ExistingTopologies),
	Required: map[string]string{
		"dsn": "provider external needs a server: give --dsn user@tcp(host:port)/schema or [server] dsn (the password in $" + PasswordEnv + "); " +
			"a [topology] needs one DSN per node: [server] dsns = [...] or --dsn once per node, the primary first",
	},
}

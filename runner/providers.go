package runner

import (
	"context"
	"fmt"

	"benchmatrix/experiment"
	"benchmatrix/server"
)

// CheckProvider completes and checks a manifest's [server] section for its
// provider: docker gets its default image, external needs a DSN.
func CheckProvider(m *experiment.Manifest) error {
	switch m.Server.Provider {
	case "sandbox":
	case "docker":
		if m.Server.Image == "" {
			m.Server.Image = server.DefaultDockerImage
		}
	case "external":
		if m.Server.DSN == "" {
			return &UsageError{Msg: fmt.Sprintf("%s: provider external needs a server: give --dsn user@tcp(host:port)/schema or [server] dsn (the password in $%s)",
				m.Path, server.PasswordEnv)}
		}
	default:
		return &UsageError{Msg: fmt.Sprintf("unknown provider %q (sandbox, docker or external)", m.Server.Provider)}
	}
	return nil
}

// Starter returns how the runner gets its server, by the manifest's
// provider.
func Starter(m *experiment.Manifest) StartFunc {
	spec := m.Server
	switch spec.Provider {
	case "docker":
		_, _ = server.RemoveStaleContainers(context.Background())
		return func(ctx context.Context, s StartSpec) (server.Server, error) {
			return server.StartDocker(ctx, server.DockerConfig{Image: s.Image, Startup: s.Startup})
		}
	case "external":
		return func(ctx context.Context, s StartSpec) (server.Server, error) {
			return server.ConnectExternal(ctx, server.ExternalConfig{DSN: spec.DSN})
		}
	}
	return func(ctx context.Context, s StartSpec) (server.Server, error) {
		return server.StartSandbox(ctx, server.SandboxConfig{Binary: spec.Binary, TempDir: spec.TempDir, Startup: s.Startup})
	}
}

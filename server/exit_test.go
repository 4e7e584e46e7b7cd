package server

import (
	"os/exec"
	"testing"
)

// How a server process ended, in words a failed cell can carry: the
// signal that killed it, or its exit status.
func TestExitText(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		args []string
		kill bool
		want string
	}{
		{"exit status", []string{"sh", "-c", "exit 3"}, false, "exited with status 3"},
		{"SIGKILL", []string{"sleep", "30"}, true, "killed by signal 9 (killed)"},
		{"clean", []string{"true"}, false, "exited with status 0"},
	} {
		cmd := exec.Command(c.args[0], c.args[1:]...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if c.kill {
			_ = cmd.Process.Kill()
		}
		if got := exitText(cmd.Wait()); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

package server

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// A sandbox that cannot start for lack of space says so first (not buried
// in mariadb-install-db's output, nor as "did not become ready"), and
// leaves nothing (no partial golden copy) in its temporary directory.
func TestSandboxNoSpace(t *testing.T) {
	if _, err := FindBinary(""); err != nil {
		t.Skip(err)
	}
	if os.Geteuid() != 0 {
		t.Skip("mounting a small filesystem needs root")
	}
	for _, size := range []string{"8m", "60m"} {
		t.Run(size, func(t *testing.T) {
			mnt := t.TempDir()
			if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size+",mode=0700", "tmpfs", mnt).CombinedOutput(); err != nil {
				t.Skipf("cannot mount a tmpfs here: %v %s", err, out)
			}
			t.Cleanup(func() { exec.Command("umount", "-l", mnt).Run() })
			sb, err := StartSandbox(context.Background(), SandboxConfig{TempDir: mnt})
			if err == nil {
				sb.Stop(context.Background())
				t.Skipf("the server started in %s of space", size)
			}
			if !strings.Contains(err.Error(), "no space left") || strings.Count(err.Error(), "\n") > 12 {
				t.Fatalf("error does not lead with the cause, or is long:\n%v", err)
			}
			left, _ := os.ReadDir(mnt)
			if len(left) > 0 {
				t.Fatalf("left in the temporary directory: %v", left)
			}
		})
	}
}

package history

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"time"
)

// GitInfo is the commit and branch of the repository dir is in. A CI's
// own variables win (GitHub Actions: GITHUB_SHA, GITHUB_HEAD_REF or
// GITHUB_REF_NAME; GitLab: CI_COMMIT_SHA, CI_COMMIT_REF_NAME): a CI
// checkout is often a detached HEAD. Empty when neither says.
func GitInfo(ctx context.Context, dir string) (commit, branch string) {
	commit = firstEnv("GITHUB_SHA", "CI_COMMIT_SHA")
	branch = firstEnv("GITHUB_HEAD_REF", "GITHUB_REF_NAME", "CI_COMMIT_REF_NAME")
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	git := func(args ...string) string {
		out, err := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...).Output()
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(out))
	}
	if commit == "" {
		commit = git("rev-parse", "HEAD")
	}
	if branch == "" {
		if b := git("rev-parse", "--abbrev-ref", "HEAD"); b != "HEAD" {
			branch = b
		}
	}
	return commit, branch
}

func firstEnv(names ...string) string {
	for _, n := range names {
		if v := os.Getenv(n); v != "" {
			return v
		}
	}
	return ""
}

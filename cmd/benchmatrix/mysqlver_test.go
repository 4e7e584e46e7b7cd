package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// `plan` and `run` know a MySQL binary's version before anything starts:
// on a fake mysqld 8.0.20 (it answers --version as MySQL does and records
// any other command line) both refuse innodb_redo_log_capacity with exit 2,
// its key and line and what to set instead, and nothing but --version
// ran, no results directory and no sandbox directory were made; on 8.0.36
// the plan SETs it and says which version it planned for.
func TestMySQLVersionRefusedBeforeStart(t *testing.T) {
	t.Parallel()
	fake := func(version string) (bin, argLog string) {
		base := filepath.Join(t.TempDir(), "mysql-"+version)
		for _, d := range []string{"bin", "share", "lib/plugin"} {
			if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		argLog = filepath.Join(base, "args.log")
		bin = filepath.Join(base, "bin", "mysqld")
		script := fmt.Sprintf("#!/bin/sh\ncase \" $* \" in\n*\" --version \"*) echo \"$0  Ver %s for Linux on x86_64 (MySQL Community Server - GPL)\"; exit 0 ;;\nesac\necho \"$*\" >> %q\nexit 1\n", version, argLog)
		if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		return bin, argLog
	}
	manifest := func(bin string) string {
		return writeManifest(t, fmt.Sprintf("[server]\nbinary = %q\n[workload]\nname = \"oltp_read_only\"\n[axes]\ninnodb_redo_log_capacity = [\"100M\", \"1G\"]\n", bin))
	}
	old, oldLog := fake("8.0.20")
	want := "line 6: axes.innodb_redo_log_capacity: innodb_redo_log_capacity exists from MySQL 8.0.30 on (the server is 8.0.20): set innodb_log_file_size"
	tmp := t.TempDir()
	out := filepath.Join(t.TempDir(), "results")
	for _, args := range [][]string{{"plan", manifest(old)}, {"run", manifest(old), "-o", out}} {
		cmd := exec.Command(binary, args...)
		cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
		b, err := cmd.CombinedOutput()
		if code := exitStatus(err); code != 2 || !strings.Contains(string(b), want) {
			t.Errorf("%s: exit %d, output %q; want exit 2 saying %q", args[0], code, b, want)
		}
	}
	if b, err := os.ReadFile(oldLog); err == nil {
		t.Errorf("mysqld ran for more than --version: %s", b)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("run made its results directory %s", out)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("left in TMPDIR: %v", left)
	}
	newer, _ := fake("8.0.36")
	b, err := exec.Command(binary, "plan", manifest(newer)).CombinedOutput()
	if err != nil || !strings.Contains(string(b), "restarts as on mysql 8.0.36") || !strings.Contains(string(b), "set innodb_redo_log_capacity=1G") {
		t.Errorf("plan on 8.0.36: %v\n%s", err, b)
	}
}

package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// perfEvents are what -syscalls counts: every syscall entry, the ones an
// idle-waiting client makes, and context switches.
const perfEvents = "raw_syscalls:sys_enter,syscalls:sys_enter_read,syscalls:sys_enter_recvfrom," +
	"syscalls:sys_enter_write,syscalls:sys_enter_sendto,syscalls:sys_enter_poll," +
	"syscalls:sys_enter_epoll_pwait,syscalls:sys_enter_futex,syscalls:sys_enter_nanosleep," +
	"syscalls:sys_enter_sched_yield,context-switches,cpu-migrations,page-faults"

// printSyscalls prints the counts per transaction from a `perf stat -x,`
// file written under -syscalls.
func (b *bench) printSyscalls(trace string, events int64) {
	if b.cfg.syscalls == "" || events == 0 {
		return
	}
	data, err := os.ReadFile(b.cfg.syscalls + "." + trace)
	if err != nil {
		fmt.Println("    perf:", err)
		return
	}
	var parts []string
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Split(line, ",")
		if len(f) < 3 {
			continue
		}
		n, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			continue
		}
		name := f[2]
		name = strings.TrimPrefix(name, "syscalls:sys_enter_")
		if name == "raw_syscalls:sys_enter" {
			name = "syscalls"
		}
		if per := n / float64(events); per >= 0.01 {
			parts = append(parts, fmt.Sprintf("%s %.2f", name, per))
		}
	}
	fmt.Printf("    per txn: %s\n", strings.Join(parts, ", "))
}

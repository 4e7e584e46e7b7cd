package observe

import "time"

// SelfRunDelay is this process's run delay so far (every thread's time
// runnable but waiting for a CPU; rundelay.go), and whether it could be
// read: the capacity search's evidence that the client, not the server,
// fell behind.
func SelfRunDelay() (time.Duration, bool) {
	ns, ok := readRunDelay("/proc/self")
	return time.Duration(ns), ok
}

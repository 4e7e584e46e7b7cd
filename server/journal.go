package server

import (
	"benchmatrix/stale"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// The globals journal: before benchmatrix changes a global on a server it
// does not own, the original value is written to a file, so that if
// benchmatrix is killed (SIGKILL, a crash, a lost machine) before it can
// put the values back, the next connection to that server as that user
// does it, and says so. The file holds no password, and is removed when
// the values are back.

// JournalPrefix begins the name of every journal file (in $TMPDIR); the
// owner's pid follows.
const JournalPrefix = "benchmatrix-globals-"

type journalEntry struct {
	Name string `json:"name"`
	Text string `json:"value"`
	Null bool   `json:"null,omitempty"`
}

type journal struct {
	PID     int    `json:"pid"`
	Address string `json:"address"`
	User    string `json:"user"`
	// Started is when the server started (Unix seconds; 0: unknown). A
	// SET GLOBAL lasts until the server stops: after a restart its
	// globals are its configuration's again, and the journal is void.
	Started int64          `json:"server_started,omitempty"`
	Entries []journalEntry `json:"originals"` // in the order first changed
}

// serverStarted is when the server started, from its Uptime (0 when it
// cannot be read).
func serverStarted(ctx context.Context, db *sql.DB) int64 {
	var name string
	var up int64
	if err := db.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE 'Uptime'").Scan(&name, &up); err != nil {
		return 0
	}
	return time.Now().Unix() - up
}

// sameStart tells two start times apart from the second the Uptime
// ticks over between two readings.
func sameStart(a, b int64) bool { return a == 0 || b == 0 || a-b <= 2 && b-a <= 2 }

func (e *External) journalPath() string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("%s%d-%p.json", JournalPrefix, os.Getpid(), e))
}

// writeJournal records the originals not yet restored; with none it
// removes the file. Callers hold e.mu.
func (e *External) writeJournal() error {
	path := e.journalPath()
	if len(e.order) == 0 {
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			return err
		}
		return nil
	}
	j := journal{PID: os.Getpid(), Address: e.address(), User: e.cfg.User, Started: e.started}
	for _, n := range e.order {
		v := e.orig[n]
		j.Entries = append(j.Entries, journalEntry{Name: n, Text: v.text, Null: v.null})
	}
	b, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// recoverJournals puts back the globals that benchmatrix processes which no
// longer run changed on this server (same address and user) and did not
// restore, and removes their journals. A journal whose server has
// restarted since, or, on this machine, stopped (nothing listens at its
// loopback address any more), is void: the restart took the values with
// it, and it is removed without a change. It returns a sentence per
// journal.
func (e *External) recoverJournals(ctx context.Context) ([]string, error) {
	paths, _ := filepath.Glob(filepath.Join(os.TempDir(), JournalPrefix+"*.json"))
	var notes []string
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		var j journal
		if json.Unmarshal(b, &j) != nil || !stale.Gone(j.PID) {
			continue
		}
		if j.Address != e.address() || j.User != e.cfg.User {
			if stopped(j.Address) && os.Remove(p) == nil {
				notes = append(notes, fmt.Sprintf("removed the journal of benchmatrix process %d for %s: nothing listens there any more, and a server that stops takes its SET GLOBAL values with it", j.PID, j.Address))
			}
			continue
		}
		if !sameStart(j.Started, e.started) {
			if err := os.Remove(p); err != nil {
				return notes, err
			}
			notes = append(notes, fmt.Sprintf("left %s as it is on %s: the server restarted after benchmatrix process %d changed it, so its globals are its configuration's again",
				journalNames(j), e.address(), j.PID))
			continue
		}
		var done []string
		for i := len(j.Entries) - 1; i >= 0; i-- {
			en := j.Entries[i]
			v := globalValue{text: en.Text, null: en.Null}
			if err := setGlobal(ctx, e.db, en.Name, v.sql()); err != nil {
				return notes, e.wrap(fmt.Sprintf("put back %s = %s, left changed by benchmatrix process %d (journal %s)", en.Name, v, j.PID, p), err)
			}
			done = append(done, en.Name+"="+v.String())
		}
		if err := os.Remove(p); err != nil {
			return notes, err
		}
		notes = append(notes, fmt.Sprintf("put back %s on %s, left changed by benchmatrix process %d that no longer runs",
			strings.Join(done, ", "), e.address(), j.PID))
	}
	return notes, nil
}

func journalNames(j journal) string {
	var names []string
	for _, en := range j.Entries {
		names = append(names, en.Name)
	}
	return strings.Join(names, ", ")
}

// stopped tells that no server listens at a loopback TCP address: the
// connection is refused at once. A remote address that does not answer
// may be a network's fault, and a socket path may come back: neither is
// judged.
func stopped(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return false
	}
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err == nil {
		c.Close()
		return false
	}
	return errors.Is(err, syscall.ECONNREFUSED)
}

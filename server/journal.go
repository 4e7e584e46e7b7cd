package server

import (
	"benchmatrix/stale"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
	PID     int            `json:"pid"`
	Address string         `json:"address"`
	User    string         `json:"user"`
	Entries []journalEntry `json:"originals"` // in the order first changed
}

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
	j := journal{PID: os.Getpid(), Address: e.address(), User: e.cfg.User}
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
// restore, and removes their journals. It returns a sentence per journal.
func (e *External) recoverJournals(ctx context.Context) ([]string, error) {
	paths, _ := filepath.Glob(filepath.Join(os.TempDir(), JournalPrefix+"*.json"))
	var notes []string
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		var j journal
		if json.Unmarshal(b, &j) != nil || !stale.Gone(j.PID) ||
			j.Address != e.address() || j.User != e.cfg.User {
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

package oltp

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// FuzzParseCommandLine feeds command lines (split on NUL when the input has
// one, on spaces otherwise) to ParseCommandLine. It must never panic, every
// error must be a *UsageError, parsing must be deterministic, and a parsed
// password must never appear in what the invocation prints. The seed
// corpus is in testdata/fuzz/FuzzParseCommandLine.
func FuzzParseCommandLine(f *testing.F) {
	f.Add("oltp_read_write --threads=8 --time=60 --report-interval=10 run")
	f.Add("oltp_point_select\x00--mysql-password=a b\x00prepare")
	f.Fuzz(func(t *testing.T, line string) {
		var args []string
		if strings.Contains(line, "\x00") {
			args = strings.Split(line, "\x00")
		} else {
			args = strings.Split(line, " ")
		}
		inv, err := ParseCommandLine(args)
		_, err2 := ParseCommandLine(args)
		if fmt.Sprint(err) != fmt.Sprint(err2) {
			t.Fatalf("not deterministic: %v then %v", err, err2)
		}
		if err != nil {
			var ue *UsageError
			if !errors.As(err, &ue) {
				t.Fatalf("error %v is %T, want *UsageError", err, err)
			}
			if ue.Msg == "" {
				t.Fatal("empty message")
			}
			return
		}
		// No test named: sysbench would read a script on stdin (FromStdin).
		if !inv.ShowHelp && !inv.ShowVersion && !inv.FromStdin {
			if !KnownWorkload(inv.Workload) || !isCommand(inv.Command) || inv.Config == nil {
				t.Fatalf("accepted %q: workload %q command %q", args, inv.Workload, inv.Command)
			}
			if inv.Options.Workload != inv.Workload {
				t.Fatalf("Options.Workload %q != %q", inv.Options.Workload, inv.Workload)
			}
		}
		// The password shows up no more often than a stand-in password does
		// (it may legitimately equal, say, a port number).
		if pw := inv.Conn.Password; pw != "" {
			printed := func(inv Invocation) string {
				return fmt.Sprintf("%v %+v %#v %s", inv, inv, inv, strings.Join(inv.Warnings, " "))
			}
			other := inv
			other.Conn.Password = "\x00"
			if n, m := strings.Count(printed(inv), pw), strings.Count(printed(other), pw); n != m {
				t.Fatalf("password %q printed", pw)
			}
		}
	})
}

package profile

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"benchmatrix/oltp"
	"benchmatrix/server"
)

// A real off-CPU recording of a sandbox serving a one-thread insert load
// (binary log, sync_binlog=1) beside an idle session that asks once every
// 200 ms: the graph of the cell draws the connection threads only and
// states every other kind's share; the time it says was runnable but
// preempted is no weight of the profile.
func TestOffCPURealRecording(t *testing.T) {
	if err := Check(OffCPU); err != nil {
		t.Skip(err)
	}
	if _, err := server.FindBinary(""); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI must install a server: %v", err)
		}
		t.Skip(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sb, err := server.StartSandbox(ctx, server.SandboxConfig{Startup: []server.Setting{{Name: "log_bin", Value: "binlog"}, {Name: "sync_binlog", Value: "1"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Stop(context.Background())
	cn, err := mysql.NewConnector(sb.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(cn)
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec("CREATE DATABASE sbtest"); err != nil {
		t.Fatal(err)
	}
	host, port, _ := net.SplitHostPort(sb.Endpoint().Addr)
	args := []string{"--mysql-host=" + host, "--mysql-port=" + port, "--mysql-user=" + sb.Endpoint().User, "--tables=1", "--table-size=1000"}
	if code := oltp.Main(ctx, append(args, "oltp_insert", "prepare"), io.Discard, io.Discard); code != 0 {
		t.Fatalf("prepare: exit %d", code)
	}
	load := make(chan int, 1)
	go func() { load <- oltp.Main(ctx, append(args, "--time=6", "oltp_insert", "run"), io.Discard, io.Discard) }()
	idle := make(chan struct{})
	go func() {
		defer close(idle)
		for i := 0; i < 40; i++ {
			_, _ = db.Exec("SELECT 1")
			time.Sleep(200 * time.Millisecond)
		}
	}()
	time.Sleep(1500 * time.Millisecond)
	rec, err := Start(ctx, Options{Mode: OffCPU, PID: sb.PID(), Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	if err := rec.Stop(); err != nil {
		t.Fatal(err)
	}
	p, err := rec.Result(ctx, ProcessName(sb.PID()))
	if err != nil {
		t.Fatal(err)
	}
	if code := <-load; code != 0 {
		t.Fatalf("run: exit %d", code)
	}
	<-idle
	kinds := p.Kinds()
	t.Logf("off-CPU %.2f s, runnable %.3f s; kinds %v", float64(p.Total())/1e9, float64(p.RunqueueTotal())/1e9, kinds)
	if !p.Has(KindConnection) || len(kinds) < 2 {
		t.Fatalf("want the connection's and other threads' off-CPU time: %v", kinds)
	}
	var b bytes.Buffer
	if err := WriteFlameGraph(&b, p, "b1e1"); err != nil {
		t.Fatal(err)
	}
	titles := wellFormed(t, b.Bytes())
	if titleShare(titles, KindConnection) < 0.999 {
		t.Errorf("the connection threads are %.3f of the graph, want all of it", titleShare(titles, KindConnection))
	}
	for _, k := range kinds {
		if k.Kind == KindConnection {
			continue
		}
		if titleShare(titles, k.Kind) >= 0 || !strings.Contains(b.String(), fmt.Sprintf("%s %.1f%%", k.Kind, 100*k.Share)) {
			t.Errorf("%s (%.1f%%): drawn, or its share not stated", k.Kind, 100*k.Share)
		}
	}
	if rq := p.RunqueueTotal(); rq > 0 && !strings.Contains(b.String(), "runnable but preempted") {
		t.Error("the runqueue time is not stated")
	}

}

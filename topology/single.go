package topology

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"time"
)

// single is the kind of one server (catalog.TopologySingle): it has no
// cluster; the runner starts the provider's server itself.
type single struct{}

var errSingle = fmt.Errorf("topology kind single is one server, not a cluster")

func (single) open(context.Context, *Cluster) error                     { return errSingle }
func (single) restart(context.Context, *Cluster) error                  { return errSingle }
func (single) checkExisting(context.Context, *Cluster, io.Writer) error { return errSingle }
func (single) rejoined(context.Context, *Cluster, *Node) error          { return nil }
func (single) heal(context.Context, *Cluster) ([]string, error)         { return nil, nil }
func (single) refreshJoin(*Cluster, *Node)                              {}
func (single) checkTarget(context.Context, *Cluster) (string, error)    { return "", nil }
func (single) caughtUp(context.Context, *Cluster, *Node, *sql.DB, string, time.Duration) error {
	return nil
}

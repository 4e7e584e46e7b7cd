package observe

import (
	"context"
	"database/sql"
	"strings"
)

// MySQL group replication, from MySQL's documentation only (MySQL cannot
// be installed here, so this is tested against a fake server, never a
// real group): performance_schema.replication_group_member_stats has one
// row per member; the local member's row is the one whose MEMBER_ID is
// the server's @@server_uuid. COUNT_TRANSACTIONS_ROWS_VALIDATING is the
// size of the certification information (the write-sets the periodic
// cleanup walks: the 60 s dips of docs/design.md's question 5),
// COUNT_TRANSACTIONS_IN_QUEUE the transactions waiting for certification,
// COUNT_TRANSACTIONS_REMOTE_IN_APPLIER_QUEUE those certified and waiting
// to be applied. Flow control throttles writers when either queue passes
// group_replication_flow_control_certifier_threshold or
// _applier_threshold (group_replication_flow_control_mode = QUOTA).

// groupStatsQuery reads the local member's statistics.
const groupStatsQuery = "SELECT * FROM performance_schema.replication_group_member_stats WHERE MEMBER_ID = @@global.server_uuid"

// groupMemberQuery reads the local member's state and role (MEMBER_ROLE
// exists from 8.0.2; 5.7 answers the state alone).
const groupMemberQuery = "SELECT * FROM performance_schema.replication_group_members WHERE MEMBER_ID = @@global.server_uuid"

// groupFlowControlQuery reads the flow-control settings.
const groupFlowControlQuery = "SHOW GLOBAL VARIABLES LIKE 'group_replication_flow_control%'"

var groupColumns = []nodeColumn{
	{"gr_rows_validating", "COUNT_TRANSACTIONS_ROWS_VALIDATING: rows in the certification information (documentation only)", asRead("gr.count_transactions_rows_validating")},
	{"gr_in_queue", "COUNT_TRANSACTIONS_IN_QUEUE: transactions waiting for certification (documentation only)", asRead("gr.count_transactions_in_queue")},
	{"gr_remote_applier_queue", "COUNT_TRANSACTIONS_REMOTE_IN_APPLIER_QUEUE: certified, waiting to be applied (documentation only)", asRead("gr.count_transactions_remote_in_applier_queue")},
	{"gr_checked", "COUNT_TRANSACTIONS_CHECKED per second (documentation only)", perSecond("gr.count_transactions_checked")},
	{"gr_conflicts", "COUNT_CONFLICTS_DETECTED per second (documentation only)", perSecond("gr.count_conflicts_detected")},
	{"gr_online", "1 while the member is ONLINE in replication_group_members, 0 in any other state (RECOVERING, ERROR, OFFLINE, UNREACHABLE; documentation only)", asRead("gr.member_online")},
	{"gr_primary", "1 while the member is the PRIMARY (MEMBER_ROLE, 8.0.2+; every member in multi-primary mode; documentation only)", asRead("gr.member_primary")},
}

// groupStats reads the local member's numeric statistics as
// gr.<column in lower case>.
func groupStats(ctx context.Context, db *sql.DB) (map[string]float64, error) {
	row, err := QueryRow(ctx, db, groupStatsQuery)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for k, v := range row {
		if f, ok := statusNumber(v); ok {
			out["gr."+strings.ToLower(k)] = f
		}
	}
	m, err := QueryRow(ctx, db, groupMemberQuery)
	if err != nil {
		return nil, err
	}
	if st, ok := m["MEMBER_STATE"]; ok {
		out["gr.member_online"] = boolNumber(st == "ONLINE")
	}
	if role, ok := m["MEMBER_ROLE"]; ok {
		out["gr.member_primary"] = boolNumber(role == "PRIMARY")
	}
	return out, nil
}

// readGroup adds a member's statistics to its status map.
func readGroup(ctx context.Context, n NodeSource, smp *nodeSample) error {
	gr, err := groupStats(ctx, n.DB)
	if err != nil {
		return err
	}
	for k, v := range gr {
		smp.status[k] = v
	}
	return nil
}

// GroupFlowControl reads a member's flow-control settings (mode,
// thresholds, period), by variable name.
func GroupFlowControl(ctx context.Context, db *sql.DB) (map[string]string, error) {
	rows, err := db.QueryContext(ctx, groupFlowControlQuery)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		out[strings.ToLower(k)] = v
	}
	return out, rows.Err()
}

func boolNumber(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

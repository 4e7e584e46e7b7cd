package tpcc

import "fmt"

// The nine table kinds of a table set, in the order sysbench-tpcc's
// cleanup drops them (children before parents).
var tableKinds = []string{"history", "new_orders", "order_line", "orders", "customer", "district", "stock", "item", "warehouse"}

// TableNames lists every table of o: each kind suffixed 1..Tables.
func TableNames(o Options) []string {
	var names []string
	for n := 1; n <= o.Tables; n++ {
		for _, k := range tableKinds {
			names = append(names, fmt.Sprintf("%s%d", k, n))
		}
	}
	return names
}

// tableSuffix is what follows the column list of every CREATE TABLE:
// the engine inside a version comment, then mysql_table_options.
func tableSuffix(o *Options) string {
	return fmt.Sprintf(" /*! ENGINE = %s */ %s", o.Engine, o.TableOptions)
}

// createTables is the DDL sysbench-tpcc sends for table set n, in its
// order: the nine CREATE TABLEs (item's rows come between them and the
// indexes; see Prepare), then indexes (secondaryIndexes) and foreign keys.
func createTables(o *Options, n int) []string {
	end := tableSuffix(o)
	hist := ""
	histPK := ""
	if o.ForcePK {
		hist = "id int NOT NULL AUTO_INCREMENT,\n"
		histPK = ",PRIMARY KEY(id)"
	}
	return []string{
		fmt.Sprintf(`CREATE TABLE IF NOT EXISTS warehouse%d (
w_id smallint not null,
w_name varchar(10),
w_street_1 varchar(20),
w_street_2 varchar(20),
w_city varchar(20),
w_state char(2),
w_zip char(9),
w_tax decimal(4,2),
w_ytd decimal(12,2),
primary key (w_id)
)%s`, n, end),
		fmt.Sprintf(`create table IF NOT EXISTS district%d (
d_id tinyint not null,
d_w_id smallint not null,
d_name varchar(10),
d_street_1 varchar(20),
d_street_2 varchar(20),
d_city varchar(20),
d_state char(2),
d_zip char(9),
d_tax decimal(4,2),
d_ytd decimal(12,2),
d_next_o_id int,
primary key (d_w_id, d_id)
)%s`, n, end),
		fmt.Sprintf(`create table IF NOT EXISTS customer%d (
c_id int not null,
c_d_id tinyint not null,
c_w_id smallint not null,
c_first varchar(16),
c_middle char(2),
c_last varchar(16),
c_street_1 varchar(20),
c_street_2 varchar(20),
c_city varchar(20),
c_state char(2),
c_zip char(9),
c_phone char(16),
c_since datetime,
c_credit char(2),
c_credit_lim bigint,
c_discount decimal(4,2),
c_balance decimal(12,2),
c_ytd_payment decimal(12,2),
c_payment_cnt smallint,
c_delivery_cnt smallint,
c_data text,
PRIMARY KEY(c_w_id, c_d_id, c_id)
)%s`, n, end),
		fmt.Sprintf(`create table IF NOT EXISTS history%d (
%sh_c_id int,
h_c_d_id tinyint,
h_c_w_id smallint,
h_d_id tinyint,
h_w_id smallint,
h_date datetime,
h_amount decimal(6,2),
h_data varchar(24) %s
)%s`, n, hist, histPK, end),
		fmt.Sprintf(`create table IF NOT EXISTS orders%d (
o_id int not null,
o_d_id tinyint not null,
o_w_id smallint not null,
o_c_id int,
o_entry_d datetime,
o_carrier_id tinyint,
o_ol_cnt tinyint,
o_all_local tinyint,
PRIMARY KEY(o_w_id, o_d_id, o_id)
)%s`, n, end),
		fmt.Sprintf(`create table IF NOT EXISTS new_orders%d (
no_o_id int not null,
no_d_id tinyint not null,
no_w_id smallint not null,
PRIMARY KEY(no_w_id, no_d_id, no_o_id)
)%s`, n, end),
		fmt.Sprintf(`create table IF NOT EXISTS order_line%d (
ol_o_id int not null,
ol_d_id tinyint not null,
ol_w_id smallint not null,
ol_number tinyint not null,
ol_i_id int,
ol_supply_w_id smallint,
ol_delivery_d datetime,
ol_quantity tinyint,
ol_amount decimal(6,2),
ol_dist_info char(24),
PRIMARY KEY(ol_w_id, ol_d_id, ol_o_id, ol_number)
)%s`, n, end),
		fmt.Sprintf(`create table IF NOT EXISTS stock%d (
s_i_id int not null,
s_w_id smallint not null,
s_quantity smallint,
s_dist_01 char(24),
s_dist_02 char(24),
s_dist_03 char(24),
s_dist_04 char(24),
s_dist_05 char(24),
s_dist_06 char(24),
s_dist_07 char(24),
s_dist_08 char(24),
s_dist_09 char(24),
s_dist_10 char(24),
s_ytd decimal(8,0),
s_order_cnt smallint,
s_remote_cnt smallint,
s_data varchar(50),
PRIMARY KEY(s_w_id, s_i_id)
)%s`, n, end),
		fmt.Sprintf(`create table IF NOT EXISTS item%d (
i_id int not null,
i_im_id int,
i_name varchar(24),
i_price decimal(5,2),
i_data varchar(50),
PRIMARY KEY(i_id)
)%s`, n, end),
	}
}

// secondaryIndexes are the indexes sysbench-tpcc adds after item's rows.
func secondaryIndexes(n int) []string {
	return []string{
		fmt.Sprintf("CREATE INDEX idx_customer%d ON customer%d (c_w_id,c_d_id,c_last,c_first)", n, n),
		fmt.Sprintf("CREATE INDEX idx_orders%d ON orders%d (o_w_id,o_d_id,o_c_id,o_id)", n, n),
		fmt.Sprintf("CREATE INDEX fkey_stock_2%d ON stock%d (s_i_id)", n, n),
		fmt.Sprintf("CREATE INDEX fkey_order_line_2%d ON order_line%d (ol_supply_w_id,ol_i_id)", n, n),
		fmt.Sprintf("CREATE INDEX fkey_history_1%d ON history%d (h_c_w_id,h_c_d_id,h_c_id)", n, n),
		fmt.Sprintf("CREATE INDEX fkey_history_2%d ON history%d (h_w_id,h_d_id )", n, n),
	}
}

// foreignKeys are sysbench-tpcc's constraints (use_fk), in its order.
func foreignKeys(n int) []string {
	fk := []struct{ table, name, cols, ref string }{
		{"new_orders", "fkey_new_orders_1_", "no_w_id,no_d_id,no_o_id", "orders%d(o_w_id,o_d_id,o_id)"},
		{"orders", "fkey_orders_1_", "o_w_id,o_d_id,o_c_id", "customer%d(c_w_id,c_d_id,c_id)"},
		{"customer", "fkey_customer_1_", "c_w_id,c_d_id", "district%d(d_w_id,d_id)"},
		{"history", "fkey_history_1_", "h_c_w_id,h_c_d_id,h_c_id", "customer%d(c_w_id,c_d_id,c_id)"},
		{"history", "fkey_history_2_", "h_w_id,h_d_id", "district%d(d_w_id,d_id)"},
		{"district", "fkey_district_1_", "d_w_id", "warehouse%d(w_id)"},
		{"order_line", "fkey_order_line_1_", "ol_w_id,ol_d_id,ol_o_id", "orders%d(o_w_id,o_d_id,o_id)"},
		{"order_line", "fkey_order_line_2_", "ol_supply_w_id,ol_i_id", "stock%d(s_w_id,s_i_id)"},
		{"stock", "fkey_stock_1_", "s_w_id", "warehouse%d(w_id)"},
		{"stock", "fkey_stock_2_", "s_i_id", "item%d(i_id)"},
	}
	out := make([]string, len(fk))
	for i, f := range fk {
		out[i] = fmt.Sprintf("ALTER TABLE %s%d ADD CONSTRAINT %s%d FOREIGN KEY(%s) REFERENCES %s",
			f.table, n, f.name, n, f.cols, fmt.Sprintf(f.ref, n))
	}
	return out
}

// dropTables is cleanup's DDL for table set n.
func dropTables(n int) []string {
	out := make([]string, len(tableKinds))
	for i, k := range tableKinds {
		out[i] = fmt.Sprintf("DROP TABLE IF EXISTS %s%d", k, n)
	}
	return out
}

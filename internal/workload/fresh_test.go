package workload

import "testing"

// TestKeyTable: a key statement belongs to the table after its first
// TABLE or ON, whatever the case and spacing; one on no loaded table to
// none, so it runs after the load.
func TestKeyTable(t *testing.T) {
	tables := []string{"orders", "order_line", "stock"}
	for stmt, want := range map[string]string{
		"ALTER TABLE order_line ADD PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number)":                "order_line",
		"CREATE UNIQUE INDEX orders_customer ON orders (o_w_id, o_d_id, o_c_id, o_id)":                 "orders",
		"create index stock_x\n  on stock(s_w_id)":                                                     "stock",
		"CREATE INDEX item_name ON item (i_name)":                                                      "",
		"ALTER TABLE history ADD CONSTRAINT h FOREIGN KEY (h_w_id) REFERENCES stock ON DELETE CASCADE": "",
		"": "",
	} {
		if got := keyTable(stmt, tables); got != want {
			t.Errorf("keyTable(%q) = %q, want %q", stmt, got, want)
		}
	}
}

// TestMadeName: a build records what each of its CREATE statements makes
// before it runs them, so each of the forms the workloads' SQL files use
// must give its name, and anything else none.
func TestMadeName(t *testing.T) {
	for stmt, want := range map[string]string{
		"CREATE TABLE warehouse (\n  w_id int NOT NULL)":                               "warehouse",
		"create table if not exists dbrig_blockio (layout int)":                        "dbrig_blockio",
		"CREATE OR REPLACE FUNCTION tprocc_neword(p_w_id int) RETURNS int":             "tprocc_neword",
		"CREATE PROCEDURE IF NOT EXISTS blockio1_write(lo bigint, hi bigint)":          "blockio1_write",
		"CREATE UNLOGGED TABLE t (a int)":                                              "t",
		"CREATE INDEX customer_last ON customer (c_w_id, c_d_id, c_last, c_first)":     "",
		"CREATE UNIQUE INDEX orders_customer ON orders (o_w_id, o_d_id, o_c_id, o_id)": "",
		"ALTER TABLE stock ADD PRIMARY KEY (s_w_id, s_i_id)":                           "",
		"CREATE TABLE": "",
		"":             "",
	} {
		if got := madeName(stmt); got != want {
			t.Errorf("madeName(%q) = %q, want %q", stmt, got, want)
		}
	}
}

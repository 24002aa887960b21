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

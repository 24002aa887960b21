package dbtarget

// Dialect is the SQL a target speaks. Workloads keep their statements per
// dialect and fall back from Name to Base, and from Base to generic SQL,
// statement by statement, so a dialect states only what differs: MariaDB,
// say, is Dialect{Name: "mariadb", Base: "mysql"}.
type Dialect struct {
	Name string
	// Base is the dialect Name refines, or "" for none.
	Base string
}

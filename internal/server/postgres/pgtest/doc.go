// Package pgtest gives tests a real PostgreSQL server: one per test binary,
// started on first use, with a fresh database per test.
//
// A package using it must stop the server when its tests end:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
// Without PostgreSQL binaries, tests that need the server are skipped,
// unless DBRIG_REQUIRE_PG=1, when they fail: CI sets it so that a missing
// server cannot pass as a green run.
package pgtest

package cli

// Recovering is the dispatcher's panic handler, for the tests: no command
// a user can reach panics on purpose.
var Recovering = recovering

// ExitCode is the dispatcher's report of a command's error, for the tests
// of a panic on another goroutine than the command's.
var ExitCode = exitCode

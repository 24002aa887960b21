package cli

// Recovering is the dispatcher's panic handler, for the tests: no command
// a user can reach panics on purpose.
var Recovering = recovering

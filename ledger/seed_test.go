package ledger_test

import "flag"

// The random property tests take their seed from the clock, so that every
// run draws anew; a failure prints its seed, and -ledger.seed=N replays it
// (through the test database: ./bin/gateway devdb -- go test ...).
var _ = flag.Uint64("ledger.seed", 0, "seed of the ledger's random property tests; 0 takes one from the clock")

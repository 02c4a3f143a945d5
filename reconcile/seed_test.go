package reconcile_test

import "flag"

// TestStatementOverRandomWorkload takes its seed from the clock, so that
// every run draws anew; a failure prints its seed, and -reconcile.seed=N
// replays it (through the test database: ./bin/gateway devdb -- go test ...).
var _ = flag.Uint64("reconcile.seed", 0, "seed of the statement's random workload test; 0 takes one from the clock")

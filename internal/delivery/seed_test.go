package delivery

import "flag"

// The random tests draw from fixed seeds, so that CI repeats one draw;
// -delivery.seed=N draws another, to explore (a loop over N) or to replay what
// such a loop found.
var _ = flag.Uint64("delivery.seed", 0, "seed of this package's random tests; 0 keeps each test's fixed seed")

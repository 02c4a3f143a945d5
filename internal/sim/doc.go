// Package sim is a seeded, deterministic simulation of the gateway in the
// manner of TigerBeetle's VOPR and auditor, over a real PostgreSQL
// (ledger/pgtest), through the domains (internal/gatewaytest). Everything
// lives in its tests (sim_test.go, model_test.go, fx_test.go,
// check_test.go):
//
//   - a workload generator drawn from one seed creates merchants and cards,
//     deposits (half with a bank reference, a few reversed by a maker–checker
//     adjustment: finance_test.go), transfers, freezes and cancels cards, authorizes, clears,
//     reverses and refunds (network messages delivered out of order and
//     duplicated), also in other currencies than the card's with rates from
//     the seed and sequences of partial reversals, clearings and refunds
//     that close a hold in pieces (fx_test.go), creates and moves
//     remittances, reports rail outcomes, and expires holds on an injected
//     clock; it disables a merchant now and then and enables it again
//     (disabled_test.go): meanwhile its /shop requests, sent to the real
//     API on loopback, are 403 and change nothing, and its cards'
//     authorizations are declined 05;
//   - between steps it injects failures: an answer lost after a commit, a
//     caller that gives up while the writer commits (EUNAVAILABLE
//     outcome_unknown), a slow database (a concurrent transaction holding the
//     merchant's journal head), a caller cancelled before it started;
//   - an auditor model in pure Go (balances of every account, card states,
//     holds, remittances, the expected journal length) checks every answer,
//     every replay against the first answer, the state after every step, and
//     Ledger.Verify periodically and at the end;
//   - every verification also checks the journal against the run's first
//     and latest signed checkpoints, then signs the next one
//     (checkpoints_test.go): no fault may rewrite what a checkpoint saw;
//   - it closes periods as its clock leaves them behind (the day and month
//     before the run, the first day after a jump past midnight, every day
//     or month the ticks cross), each checked against the model, and
//     verifies the faulted merchant, closes included, after every step
//     run under a fault (closes_test.go; docs/audit.md, "Period closes in
//     the seeded simulation").
//
// go test ./internal/sim runs about 12 seconds of steps with a fresh seed;
// -sim.seed, -sim.steps and -sim.duration (or SIM_SEED, SIM_STEPS,
// SIM_DURATION) reproduce a failure or run longer. docs/reliability.md has
// the details.
package sim

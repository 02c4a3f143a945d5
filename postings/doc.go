// Package postings is the pure core of the gateway: amounts in minor units
// of ISO 4217 currencies, accounts, balanced entries and their validation,
// the one application error type, and the remittance rules (corridors,
// IBAN/BIC checks, fees, screening). It does no I/O and imports only the
// standard library, apd and golang.org/x/text/unicode/norm (NFKC for
// sanctions screening); the ledger stores what it validates.
package postings

// Package postings is the pure core of the gateway's money: amounts in minor
// units of ISO 4217 currencies, their rounding (every direction explicit),
// FX conversion, the chart of accounts, entry kinds, balanced entries and
// their validation, the hash chain's canonical encoding, and the one
// application error type with its codes and reasons. It does no I/O and
// imports only the standard library and apd; the ledger stores what it
// validates. The remittance rules (corridors, IBAN/BIC/ABA/IFSC, screening)
// are package internal/remittance/rules.
package postings

// Package rules holds the pure rules of remittances: the corridor table
// (rails, dynamic beneficiary fields, purpose codes, fee schedules), the
// validation of a request against it, IBAN/BIC/ABA checks, ISO 20022 return
// reasons and sanctions screening with its confusable-skeleton keys. It does
// no I/O and imports only the standard library, golang.org/x/text and
// postings (currencies, rounding, the error type).
package rules

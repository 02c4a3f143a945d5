// Package delivery sends the gateway's signed callbacks. The ledger's
// outbox writes each event with a delivery row in the transaction of the
// change (ledger.Tx.Emit); this package takes it from there: claiming due
// deliveries and recording what their attempts found (Store), the retry
// schedule and the 24-hour window (Backoff, NextAttempt, Window), one signed
// POST attempt (Sender), the dispatcher that runs rounds of them
// (Dispatcher), the operator's listing and replays, and, through package
// callbackurl, the SSRF rules for callback URLs (ValidateURL, AllowList):
// checked again before each attempt and applied by the Sender's dialer at
// connect time. docs/callbacks.md describes the whole.
package delivery

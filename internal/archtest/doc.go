// Package archtest holds the tests of the gateway's architecture
// (docs/architecture.md): which package may import which, and the rules
// that hold across packages (business failure reasons are constants). It
// has no code of its own.
package archtest

package pgtest

import "testing"

// Under -short (make test-short) a test that asks for a database is
// skipped before any server is found or started: the fast tier runs on a
// machine with Go alone.
func TestNewDatabaseSkipsUnderShort(t *testing.T) {
	if !testing.Short() {
		t.Skip("checks the -short tier; run with -short")
	}
	reached := false
	t.Run("database", func(t *testing.T) {
		NewDatabase(t)
		reached = true
	})
	if reached {
		t.Error("NewDatabase gave a database under -short")
	}
	if serverURL != "" || cluster != nil || tmpDir != "" {
		t.Errorf("a server was found or started under -short (%q)", serverURL)
	}
}

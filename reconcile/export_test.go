package reconcile

// SetSettlementRowsMax lowers the row limit of a settlement file for a test
// that must not run in parallel with others; the returned func restores it.
func SetSettlementRowsMax(n int64) (restore func()) {
	old := settlementRowsMax
	settlementRowsMax = n
	return func() { settlementRowsMax = old }
}

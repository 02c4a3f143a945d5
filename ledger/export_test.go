package ledger

// SetBeforeCommit makes each batch call f with its merchants right before
// its COMMIT (nil: none). Set it before the commands it should see.
func SetBeforeCommit(l *Ledger, f func(merchants []int64)) { l.beforeCommit = f }

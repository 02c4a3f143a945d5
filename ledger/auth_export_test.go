package ledger

// SetAuthTrace makes l report each step of authenticate to f (nil: none).
func SetAuthTrace(l *Ledger, f func(step string)) { l.authTrace = f }

// SetBeforeCommit makes each batch call f with its merchants right before
// its COMMIT (nil: none). Set it before the commands it should see.
func SetBeforeCommit(l *Ledger, f func(merchants []int64)) { l.beforeCommit = f }

package ledger

// SetAuthTrace makes l report each step of authenticate to f (nil: none).
func SetAuthTrace(l *Ledger, f func(step string)) { l.authTrace = f }

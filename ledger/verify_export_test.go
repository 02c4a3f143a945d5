package ledger

// VerifyHooks are the test hooks of Verify (verify.go's verifyHooks).
type VerifyHooks struct {
	// AfterSnapshot runs once the snapshot is taken (and exported), before
	// anything is read and before any helper connection imports it.
	AfterSnapshot func()
	// BeforeCheck runs before each aggregate check, with the connection it
	// runs on: 0 is the stream's, 1… the helpers'. It is called from
	// several goroutines.
	BeforeCheck func(conn int, name string)
	// Helpers overrides how many helper connections Verify uses, when set.
	Helpers *int
	// HelpersOnly keeps the stream's connection from taking checks while a
	// helper can.
	HelpersOnly bool
	// ExportFails makes pg_export_snapshot fail.
	ExportFails bool
}

// WithVerifyHooks returns opts with the hooks set.
func WithVerifyHooks(opts VerifyOptions, h VerifyHooks) VerifyOptions {
	opts.hooks = &verifyHooks{afterSnapshot: h.AfterSnapshot, beforeCheck: h.BeforeCheck,
		helpers: h.Helpers, helpersOnly: h.HelpersOnly, exportFails: h.ExportFails}
	return opts
}

// VerifyCheckNames lists the aggregate checks by name.
func VerifyCheckNames() []string {
	names := make([]string, len(verifyChecks))
	for i, c := range verifyChecks {
		names[i] = c.name
	}
	return names
}

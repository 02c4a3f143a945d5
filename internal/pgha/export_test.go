package pgha

// WriteNodeSettingsForTest appends a new node's settings to the
// postgresql.conf of pgdata, as StartFormation does for node1.
func WriteNodeSettingsForTest(dir, pgdata string) error {
	f := &Formation{dir: dir}
	return f.writeNodeSettings(&Keeper{Name: "node1", PGData: pgdata})
}

package pgha

// WriteNodeSettingsForTest appends a new node's settings to the
// postgresql.conf of pgdata, as StartFormation does for node1, in a
// formation of dir, and returns the nodes' log directory.
func WriteNodeSettingsForTest(dir, pgdata string) (string, error) {
	f := &Formation{dir: dir}
	return f.NodeLogDir(), f.writeNodeSettings(&Keeper{Name: "node1", PGData: pgdata})
}

// DataNodesForTest is how many data nodes a new formation of o gets.
func DataNodesForTest(o FormationOptions) (int, error) { return o.dataNodes() }

// SeedNodeForTest makes pgdata a seeded copy of seed, as StartFormation
// does for the first node of a formation from a restore (without scram:
// no pg_hba.conf of the formation's).
func SeedNodeForTest(dir, pgdata, seed string) error {
	f := &Formation{dir: dir}
	return f.seedNode(&Keeper{Name: "node1", PGData: pgdata}, seed)
}

package ledger

// Statement is one of the writer's prepared statements.
type Statement struct{ Name, SQL string }

// Statements returns every statement the package prepares.
func Statements() []Statement {
	out := make([]Statement, len(stmtsAll))
	for i, s := range stmtsAll {
		out[i] = Statement{s.name, s.sql}
	}
	return out
}

package ledger

import (
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// A batch trace records what one batch transaction sent to PostgreSQL: its
// round trips, and each statement with the rows it changed or returned. It
// exists for the tests that hold the writer to a fixed number of
// statements and round trips per batch, whatever the number of merchants
// in it (docs/performance.md, "One merchant against sixteen"); production
// never sets the hook, and then nothing is recorded.

// BatchTrace is what one committed batch transaction sent.
type BatchTrace struct {
	Commands   int // commands in the batch
	Merchants  int // distinct merchants among them
	RoundTrips int // pipelines sent, and the COMMIT
	Statements []TracedStatement
}

// TracedStatement is one statement of a batch: the start of its text and
// the rows it changed or returned (its command tag).
type TracedStatement struct {
	SQL  string
	Rows int64
}

// traceLabelMax bounds the start of a statement's text kept in a trace.
const traceLabelMax = 72

func traceLabel(sql string) string {
	s := strings.Join(strings.Fields(sql), " ")
	if len(s) > traceLabelMax {
		s = s[:traceLabelMax]
	}
	return s
}

// traceSent records a pipeline's statements once it was sent.
func (t *BatchTrace) traceSent(labels []string, tags []pgconn.CommandTag) {
	t.RoundTrips++
	for i, l := range labels {
		var rows int64
		if i < len(tags) {
			rows = tags[i].RowsAffected()
		}
		t.Statements = append(t.Statements, TracedStatement{SQL: l, Rows: rows})
	}
}

package ledger

import (
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/paygate/gateway/postings"
)

// The one table of database failures: every SQLSTATE that means "not now"
// is EUNAVAILABLE (503 with Retry-After, never a 500); contention stays
// retryable by the writer, time-outs are answered at once, and only an
// outage fails the commands queued behind a batch.
func TestMapErrorStates(t *testing.T) {
	for _, tt := range []struct {
		state     string
		code      postings.Code
		reason    postings.Reason
		transient bool // the writer tries the batch again
		outage    bool // the writer fails the shard's queue
	}{
		{"55P03", postings.EUNAVAILABLE, postings.ReasonLockTimeout, false, false},
		{"57014", postings.EUNAVAILABLE, postings.ReasonStatementTimeout, false, false},
		{"40001", postings.EUNAVAILABLE, postings.ReasonContention, true, false},
		{"40P01", postings.EUNAVAILABLE, postings.ReasonContention, true, false},
		{"53300", postings.EUNAVAILABLE, "", true, true}, // too many connections
		{"57P01", postings.EUNAVAILABLE, "", true, true}, // admin shutdown
		{"08006", postings.EUNAVAILABLE, "", true, true}, // connection failure
		{"22008", postings.EINTERNAL, "", false, false},  // datetime overflow: input that escaped validation is a bug
		{"42P01", postings.EINTERNAL, "", false, false},  // undefined table
	} {
		raw := fmt.Errorf("ledger: statement: %w", &pgconn.PgError{Code: tt.state, Message: "m"})
		err := mapError(raw)
		e := postings.AsError(err)
		if postings.ErrorCode(err) != tt.code || (tt.code != postings.EINTERNAL && e.Reason != tt.reason) {
			t.Errorf("%s: %v (reason %q), want %s %q", tt.state, err, e.Reason, tt.code, tt.reason)
		}
		if got := isTransient(err); got != tt.transient {
			t.Errorf("%s: isTransient(mapped) = %v, want %v", tt.state, got, tt.transient)
		}
		if got := isOutage(err); got != tt.outage {
			t.Errorf("%s: isOutage = %v, want %v", tt.state, got, tt.outage)
		}
		if tt.state == "40001" || tt.state == "40P01" {
			if !isTransient(raw) {
				t.Errorf("%s: isTransient(raw) = false", tt.state)
			}
		}
	}
	// A COMMIT of unknown outcome keeps its identity, whatever its cause:
	// it must never be retried blindly nor answered as "nothing was done".
	unknown := &outcomeUnknownError{err: &pgconn.PgError{Code: "57014"}}
	if err := mapError(unknown); !isOutcomeUnknown(err) || isTransient(err) {
		t.Errorf("outcome unknown mapped to %v", err)
	}
	if err := mapError(errors.New("plain")); postings.ErrorCode(err) != postings.EINTERNAL {
		t.Errorf("a plain error mapped to %v", err)
	}
}

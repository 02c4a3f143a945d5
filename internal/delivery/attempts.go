package delivery

import (
	"context"
	"time"

	"github.com/paygate/gateway/ledger"
)

// Attempt is one sending of an event's callback, as RecordDeliveries kept
// it (delivery_attempts).
type Attempt struct {
	// WindowStart is the retry window the attempt belongs to: a replay
	// starts a new one and numbers its attempts from 1 again.
	WindowStart   time.Time  `json:"windowStart" bun:"window_start"`
	Attempt       int        `json:"attempt" bun:"attempt"`
	At            time.Time  `json:"at" bun:"at"`
	DurationMs    int        `json:"durationMs" bun:"duration_ms"`
	HTTPStatus    *int       `json:"httpStatus,omitempty" bun:"http_status"`
	Error         *string    `json:"error,omitempty" bun:"error"`
	Outcome       string     `json:"outcome" bun:"outcome"` // DELIVERED, PENDING (tried again at NextAttemptAt) or FAILED
	NextAttemptAt *time.Time `json:"nextAttemptAt,omitempty" bun:"next_attempt_at"`
}

// AttemptsMax bounds one listing of an event's attempts.
const AttemptsMax = 500

// Attempts lists the newest limit attempts (AttemptsMax when ≤ 0 or more)
// at delivering the merchant's event, oldest first. An event of another
// merchant, like an unknown one, is ENOTFOUND event; an event never sent
// has none.
func (s *Store) Attempts(ctx context.Context, merchant int64, eventID string, limit int) ([]Attempt, error) {
	if limit <= 0 || limit > AttemptsMax {
		limit = AttemptsMax
	}
	ev, err := s.Event(ctx, merchant, eventID)
	if err != nil {
		return nil, err
	}
	out := []Attempt{}
	err = s.l.DB().NewRaw(`select window_start, attempt, at, duration_ms, http_status, error, outcome, next_attempt_at from (
			select window_start, attempt, at, duration_ms, http_status, error, outcome, next_attempt_at, id
			from delivery_attempts where merchant_id = ? and event_seq = ? and endpoint_no = 1
			order by id desc limit ?) a
		order by id`, merchant, ev.EventSeq, limit).Scan(ctx, &out)
	for i := range out {
		out[i].WindowStart, out[i].At = out[i].WindowStart.UTC(), out[i].At.UTC()
	}
	return out, ledger.MapError(err)
}

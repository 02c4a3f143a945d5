package delivery

import (
	"context"
	"time"

	"github.com/paygate/gateway/ledger"
)

// EndpointDelivery is an event's delivery to one of the merchant's webhook
// endpoints, with its attempts (the event's GET shows one per endpoint).
type EndpointDelivery struct {
	EndpointID string `json:"endpointId" bun:"endpoint_id"`
	EndpointNo int    `json:"endpointNo" bun:"endpoint_no"`
	URL        string `json:"url" bun:"url"`
	Status     string `json:"status" bun:"status"`
	Progress
	// AttemptList is the delivery's newest attempts (at most AttemptsMax),
	// oldest first.
	AttemptList []Attempt `json:"attemptList,omitempty" bun:"-"`
}

// Progress is a delivery's attempts so far and their outcome: the same
// columns of deliveries, encoded alike, on an event's delivery as listed
// (DeliveryInfo: endpoint one's) and on each endpoint's (EndpointDelivery).
type Progress struct {
	Attempts      int        `json:"attempts" bun:"attempts"`
	NextAttemptAt *time.Time `json:"nextAttemptAt,omitempty" bun:"next_attempt_at"`
	LastAttemptAt *time.Time `json:"lastAttemptAt,omitempty" bun:"last_attempt_at"`
	LastStatus    *int       `json:"lastStatus,omitempty" bun:"last_status"`
	LastError     *string    `json:"lastError,omitempty" bun:"last_error"`
	DeliveredAt   *time.Time `json:"deliveredAt,omitempty" bun:"delivered_at"`
}

// endpointDeliveryColumns are an EndpointDelivery's, from deliveries d and
// webhook_endpoints w.
const endpointDeliveryColumns = `w.endpoint_id, d.endpoint_no, d.url, d.status, d.attempts, d.next_attempt_at,
	d.last_attempt_at, d.last_status, d.last_error, d.delivered_at`

// EndpointDeliveries lists the deliveries of the merchant's event seq, by
// endpoint, each with its attempts: two statements whatever the count.
func (s *Store) EndpointDeliveries(ctx context.Context, merchant, seq int64) ([]EndpointDelivery, error) {
	out := []EndpointDelivery{}
	err := s.l.DB().NewRaw(`select `+endpointDeliveryColumns+`
		from deliveries d join webhook_endpoints w on w.merchant_id = d.merchant_id and w.endpoint_no = d.endpoint_no
		where d.merchant_id = ? and d.event_seq = ? order by d.endpoint_no`, merchant, seq).Scan(ctx, &out)
	if err != nil || len(out) == 0 {
		return out, ledger.MapError(err)
	}
	var rows []struct {
		Attempt
		EndpointNo int `bun:"endpoint_no"`
	}
	err = s.l.DB().NewRaw(`select endpoint_no, window_start, attempt, at, duration_ms, http_status, error, outcome, next_attempt_at
		from (select *, row_number() over (partition by endpoint_no order by id desc) as n
		      from delivery_attempts where merchant_id = ? and event_seq = ?) a
		where n <= ? order by endpoint_no, id`, merchant, seq, AttemptsMax).Scan(ctx, &rows)
	if err != nil {
		return nil, ledger.MapError(err)
	}
	at := make(map[int]int, len(out))
	for i := range out {
		at[out[i].EndpointNo] = i
		out[i].AttemptList = []Attempt{}
	}
	for _, r := range rows {
		if i, ok := at[r.EndpointNo]; ok {
			a := r.Attempt
			a.WindowStart, a.At = a.WindowStart.UTC(), a.At.UTC()
			out[i].AttemptList = append(out[i].AttemptList, a)
		}
	}
	return out, nil
}

package console

import (
	"net/http"
	"time"

	"github.com/paygate/gateway/internal/delivery"
)

// One webhook event with every attempt at delivering it (the delivery
// store's delivery_attempts), where the events page shows the last one.
// The merchant is the session's: another merchant's event is unknown.

// attemptsPageMax bounds the attempts an event's page lists (the newest).
const attemptsPageMax = 200

type eventData struct {
	Event    *delivery.DeliveryInfo
	Attempts []attemptView
	Bounded  bool // there may be older attempts than those listed
}

type attemptView struct {
	delivery.Attempt
	N         int // the attempt's number in its window (.Attempt is the embedded struct)
	Duration  time.Duration
	NewWindow bool // the first attempt of a replay's window
}

func (s *Server) event(w http.ResponseWriter, r *http.Request, sess *session) {
	id := r.PathValue("eventID")
	if !eventIDRE.MatchString(id) {
		s.notFound(w, r)
		return
	}
	ctx := r.Context()
	ev, err := s.cfg.Deliveries.Event(ctx, sess.user.MerchantID, id)
	if err != nil {
		s.domainError(w, r, err)
		return
	}
	as, err := s.cfg.Deliveries.Attempts(ctx, sess.user.MerchantID, id, attemptsPageMax)
	if err != nil {
		s.domainError(w, r, err)
		return
	}
	d := eventData{Event: ev, Bounded: len(as) == attemptsPageMax}
	for i, a := range as {
		d.Attempts = append(d.Attempts, attemptView{Attempt: a, N: a.Attempt, Duration: time.Duration(a.DurationMs) * time.Millisecond,
			NewWindow: i > 0 && !a.WindowStart.Equal(as[i-1].WindowStart)})
	}
	s.render(w, r, http.StatusOK, "event", "Webhook event "+ev.EventID, d)
}

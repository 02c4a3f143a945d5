package delivery

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// Delivery statuses. The ledger's outbox writes PENDING.
const (
	DeliveryPending   = "PENDING"
	DeliveryDelivered = "DELIVERED"
	DeliveryFailed    = "FAILED" // the 24-hour window ended: a dead letter, replayable
)

// Delivery is one claimed attempt: the event's stored body, where to send
// it and the merchant's signing keys (opened from their sealed form, kept in
// memory only for the attempt): during a roll's overlap PreviousKey is the
// replaced key, and the attempt is signed with both.
type Delivery struct {
	MerchantID  int64
	EventSeq    int64
	EventID     string
	EventType   string
	ShopNo      string
	URL         string
	Body        []byte
	PrivateKey  string
	PreviousKey string // "" outside a roll's overlap
	// WebhookSecrets sign the Standard Webhooks headers: the merchant's
	// secrets in force, oldest first (two during a roll's overlap).
	WebhookSecrets []string
	Attempt        int // 1 for the first
	WindowStart    time.Time
	// Endpoint is the number of the merchant's webhook endpoint the
	// delivery goes to (1: the default URL; endpoints.go).
	Endpoint int
}

// DeliveryLeaseMax bounds how long a claim keeps other dispatchers away
// from a delivery: longer than one attempt (5 s) with room to record it.
const DeliveryLeaseMax = 60 * time.Second

// Store is the deliveries table: the dispatcher's claims and records, and
// the operator's listing and replays. Its statements run outside the
// writer: a delivery changes no money and takes no merchant's lock.
type Store struct {
	l *ledger.Ledger
	// sealer opens the merchants' signing keys of the claimed deliveries.
	sealer *merchant.Sealer
	// secrets keeps the opened webhook secrets between claims (secretcache.go).
	secrets secretCache
}

// NewStore returns the deliveries of l's database, whose merchants' signing
// keys sealer opens.
func NewStore(l *ledger.Ledger, sealer *merchant.Sealer) *Store { return &Store{l: l, sealer: sealer} }

// ClaimDeliveries claims up to limit due deliveries for one attempt each.
// SKIP LOCKED spreads them over dispatchers; the claim counts the attempt
// and moves next_attempt_at past the lease, so no other dispatcher sends the
// same attempt while this one holds it. A delivery waits while an earlier
// one of the same card or remittance is still pending, so a later status is
// never sent before the earlier one is acknowledged or dead.
func (s *Store) ClaimDeliveries(ctx context.Context, limit int, lease time.Duration) ([]Delivery, error) {
	if lease <= 0 || lease > DeliveryLeaseMax {
		lease = DeliveryLeaseMax
	}
	now := s.l.Now()
	var rows []struct {
		MerchantID  int64           `bun:"merchant_id"`
		EventSeq    int64           `bun:"event_seq"`
		URL         string          `bun:"url"`
		Attempts    int             `bun:"attempts"`
		WindowStart time.Time       `bun:"window_start"`
		EventID     string          `bun:"event_id"`
		EventType   string          `bun:"event_type"`
		Payload     json.RawMessage `bun:"payload"`
		ShopNo      string          `bun:"shop_no"`
		Sealed      []byte          `bun:"private_key_sealed"`
		PrevSealed  []byte          `bun:"private_key_prev_sealed"`
		PrevUntil   *time.Time      `bun:"private_key_prev_until"`
		Endpoint    int             `bun:"endpoint_no"`
		WSRolledAt  *time.Time      `bun:"ws_rolled_at"`
		WSSealed    []byte          `bun:"ws_sealed"`
		WSPrev      []byte          `bun:"ws_prev_sealed"`
		WSPrevUntil *time.Time      `bun:"ws_prev_until"`
	}
	err := s.l.DB().NewRaw(claimSQL,
		now, limit, now.Add(lease)).Scan(ctx, &rows)
	if err != nil {
		return nil, ledger.MapError(err)
	}
	out := make([]Delivery, 0, len(rows))
	for _, r := range rows {
		key, err := s.sealer.OpenSigningKey(r.Sealed, r.ShopNo)
		if err != nil {
			return nil, ledger.Invariantf("the signing key of %s does not open: %v", r.ShopNo, err)
		}
		var prev []byte
		if r.PrevUntil != nil && now.Before(*r.PrevUntil) {
			if prev, err = s.sealer.OpenSigningKey(r.PrevSealed, r.ShopNo); err != nil {
				return nil, ledger.Invariantf("the previous signing key of %s does not open: %v", r.ShopNo, err)
			}
		}
		secrets, err := s.secretsInForce(ctx, sealedSecrets{MerchantID: r.MerchantID, ShopNo: r.ShopNo, Endpoint: r.Endpoint,
			RolledAt: r.WSRolledAt, Sealed: r.WSSealed, PrevSealed: r.WSPrev, PrevUntil: r.WSPrevUntil}, now)
		if err != nil {
			return nil, err
		}
		out = append(out, Delivery{MerchantID: r.MerchantID, EventSeq: r.EventSeq, EventID: r.EventID, EventType: r.EventType,
			ShopNo: r.ShopNo, URL: r.URL, Body: r.Payload, PrivateKey: string(key), PreviousKey: string(prev),
			Attempt: r.Attempts, WindowStart: r.WindowStart.UTC(), WebhookSecrets: secrets, Endpoint: r.Endpoint})
	}
	return out, nil
}

// DeliveryOutcome is what an attempt found.
type DeliveryOutcome struct {
	OK     bool
	Status int    // HTTP status, 0 when none came
	Error  string // short, without secrets
	// At is when the request was sent (zero: when it is recorded) and
	// Duration how long it took: kept in the attempt's row.
	At       time.Time
	Duration time.Duration
	// Next is when to try again; Dead ends the delivery (the window is over).
	Next time.Time
	Dead bool
}

// RecordDelivery stores the outcome of one attempt (RecordDeliveries).
func (s *Store) RecordDelivery(ctx context.Context, d *Delivery, o DeliveryOutcome) error {
	return s.RecordDeliveries(ctx, []DeliveryRecord{{Delivery: d, Outcome: o}})
}

// DeliveryRecord is an attempt and what it found.
type DeliveryRecord struct {
	Delivery *Delivery
	Outcome  DeliveryOutcome
}

// DeliveryRecordsMax bounds one RecordDeliveries call (a dispatcher round).
const DeliveryRecordsMax = 4096

// stmtRecordDeliveries updates the deliveries and, for each one it
// updated, appends the attempt to delivery_attempts, in one statement (so
// one commit for a round, and an attempt is in both or in neither).
var stmtRecordDeliveries = ledger.NewStmt(`
	with upd as (
		update deliveries d
		set status = v.status, next_attempt_at = v.next, last_attempt_at = $1::timestamptz,
		    last_status = nullif(v.code, 0), last_error = nullif(v.err, ''), delivered_at = v.delivered
		from unnest($2::bigint[], $3::bigint[], $4::integer[], $5::text[], $6::timestamptz[], $7::integer[], $8::text[],
		            $9::timestamptz[], $10::timestamptz[], $11::integer[], $12::integer[])
		     as v(m, seq, attempts, status, next, code, err, delivered, at, ms, ep)
		cross join lateral (select ctid from deliveries x
		                    where x.merchant_id = v.m and x.event_seq = v.seq and x.endpoint_no = v.ep and x.attempts = v.attempts
		                      and x.status = 'PENDING'
		                    offset 0) x
		where d.ctid = x.ctid
		returning d.merchant_id, d.event_seq, d.endpoint_no, d.window_start, v.attempts, v.at, v.ms, v.code, v.err, v.status, v.next
	)
	insert into delivery_attempts (merchant_id, event_seq, endpoint_no, window_start, attempt, at, duration_ms, http_status, error, outcome,
	                               next_attempt_at)
	select merchant_id, event_seq, endpoint_no, window_start, attempts, at, ms, nullif(code, 0), nullif(err, ''), status, next from upd`)

// RecordDeliveries stores the outcomes of attempts on deliveries this
// dispatcher claimed, in one statement: one commit for a round rather than
// one per callback (it was 81 % of PostgreSQL's time draining a backlog). A
// row that moved on meanwhile (replayed, or claimed again after the lease ran
// out) is left alone: the attempt number in the claim must still match.
func (s *Store) RecordDeliveries(ctx context.Context, recs []DeliveryRecord) error {
	if len(recs) == 0 {
		return nil
	}
	if len(recs) > DeliveryRecordsMax {
		return fmt.Errorf("delivery: %d delivery records, at most %d at once", len(recs), DeliveryRecordsMax)
	}
	now := s.l.Now()
	n := len(recs)
	ms, seqs := make([]int64, n), make([]int64, n)
	attempts, codes := make([]int32, n), make([]int32, n)
	statuses, errs := make([]string, n), make([]string, n)
	nexts, delivered := make([]*time.Time, n), make([]*time.Time, n)
	ats, durs, eps := make([]time.Time, n), make([]int32, n), make([]int32, n)
	for i, r := range recs {
		d, o := r.Delivery, r.Outcome
		eps[i] = int32(max(d.Endpoint, 1)) // 0: a Delivery made before endpoints, endpoint one's
		ms[i], seqs[i], attempts[i] = d.MerchantID, d.EventSeq, int32(d.Attempt)
		codes[i], errs[i] = int32(o.Status), o.Error
		if codes[i] < 100 || codes[i] > 999 {
			codes[i] = 0 // not an HTTP status: none came
		}
		ats[i] = o.At
		if ats[i].IsZero() {
			ats[i] = now
		}
		durs[i] = int32(min(max(o.Duration.Milliseconds(), 0), math.MaxInt32))
		if len(errs[i]) > 500 {
			errs[i] = errs[i][:500]
		}
		switch {
		case o.OK:
			statuses[i], delivered[i] = DeliveryDelivered, &now
		case o.Dead:
			statuses[i] = DeliveryFailed
		default:
			next := o.Next
			statuses[i], nexts[i] = DeliveryPending, &next
		}
	}
	return s.l.Exec(ctx, stmtRecordDeliveries, now, ms, seqs, attempts, statuses, nexts, codes, errs, delivered, ats, durs, eps)
}

// DeliveryInfo is a delivery as operators list it.
type DeliveryInfo struct {
	ShopNo    string `json:"shopNo" bun:"-"` // the merchant's (withShop)
	EventSeq  int64  `json:"eventSeq" bun:"event_seq"`
	EventID   string `json:"eventId" bun:"event_id"`
	EventType string `json:"eventType" bun:"event_type"`
	Subject   string `json:"subject" bun:"subject"`
	URL       string `json:"url" bun:"url"`
	Status    string `json:"status" bun:"status"`
	Progress
	CreatedAt time.Time `json:"createdAt" bun:"created_at"`
	// Deliveries are the event's deliveries by endpoint, endpoint one
	// first, without their attempts (event_status.go): Status is the worst
	// of them; the fields above are endpoint one's.
	Deliveries []EndpointDelivery `json:"deliveries,omitempty" bun:"-"`
}

// DeliveriesPageMax bounds one listing.
const DeliveriesPageMax = 1000

// Deliveries lists a merchant's events with their delivery (status
// NOT_SENT for an event that has no target), newest first, optionally of
// one status (DeliveriesInOrder).
func (s *Store) Deliveries(ctx context.Context, merchant int64, status string, limit int) ([]DeliveryInfo, error) {
	return s.DeliveriesInOrder(ctx, merchant, status, OrderDesc, limit)
}

// DeliveriesInOrder is Deliveries in either order (ParseOrder): the
// operator's `callbacks list --order` and the console's events page.
func (s *Store) DeliveriesInOrder(ctx context.Context, merchant int64, status string, order Order, limit int) ([]DeliveryInfo, error) {
	out, err := s.deliveriesInOrder(ctx, merchant, status, order, limit)
	if err != nil {
		return nil, err
	}
	return out, s.complete(ctx, merchant, ptrs(out))
}

func (s *Store) deliveriesInOrder(ctx context.Context, merchant int64, status string, order Order, limit int) ([]DeliveryInfo, error) {
	if err := CheckStatus("status", status); err != nil {
		return nil, err
	}
	if _, err := ParseOrder("order", string(order), OrderDesc); err != nil || order == "" {
		return nil, postings.FieldErrorf("order", "must be asc or desc")
	}
	if limit <= 0 || limit > DeliveriesPageMax {
		limit = DeliveriesPageMax
	}
	var out []DeliveryInfo
	err := s.l.DB().NewRaw(`select `+eventColumns+`
		from events e
		join merchants m on m.id = e.merchant_id
		`+eventJoinSQL+`
		where e.merchant_id = ? and `+eventFilterSQL+`
		order by `+orderSQL[order]+`
		limit ?`, merchant, status, status, pgdialect.Array([]string{}), pgdialect.Array([]string{}), limit).Scan(ctx, &out)
	return out, ledger.MapError(err)
}

// ReplayEvent sends an event again from now, with a new 24-hour window and
// the same event_id (receivers de-duplicate on it): a failed or delivered
// delivery goes back to pending, and an event that had no target gets one
// if the merchant has a URL now. The target is the event's own URL, else
// the merchant's URL now: a merchant that moved its endpoint replays to
// the new one. A delivery still pending (waiting for its
// next attempt after failures) is made due now with a fresh window: the
// merchant who fixed its endpoint need not wait for the backoff. Repeating
// a replay leaves the same state (pending, due now, the same event_id); an
// attempt in flight meanwhile records nothing over it (RecordDeliveries
// matches the claim's attempt). The answer shows the delivery. ENOTFOUND
// event for an unknown id and for another merchant's alike; ESTATE
// no_callback_url when there is nowhere to send it.
func (s *Store) ReplayEvent(ctx context.Context, merchant int64, eventID string) (*DeliveryInfo, error) {
	if err := CheckEventID("eventId", eventID); err != nil {
		return nil, err
	}
	now := s.l.Now()
	url, err := s.callbackURL(ctx, merchant)
	if err != nil {
		return nil, err
	}
	one, err := s.l.DB().NewRaw(`
		insert into deliveries as d (merchant_id, event_seq, subject, url, status, attempts, window_start, next_attempt_at)
		select e.merchant_id, e.event_seq, e.subject, coalesce(e.callback_url, ?0), 'PENDING', 0, ?1, ?1
		from events e
		where e.merchant_id = ?2 and e.event_id = ?3 and coalesce(e.callback_url, ?0) is not null
		  -- card.created goes to its request's URL alone (ledger.Event.RequestURLOnly).
		  and (e.event_type <> 'card.created' or e.callback_url is not null)
		  -- The default URL only while endpoint one takes the event.
		  and (e.callback_url is not null or exists (select 1 from webhook_endpoints w
		       where w.merchant_id = e.merchant_id and w.endpoint_no = 1 and `+endpointTakesSQL+`))
		on conflict (merchant_id, event_seq, endpoint_no) do update
		set status = 'PENDING', attempts = 0, window_start = excluded.window_start, url = excluded.url,
		    next_attempt_at = excluded.next_attempt_at, delivered_at = null`,
		url, now, merchant, eventID).Exec(ctx)
	if err != nil {
		return nil, ledger.MapError(err)
	}
	// The event's deliveries to the other endpoints, to their URL now,
	// while the endpoint exists.
	others, err := s.l.DB().NewRaw(`
		update deliveries d set status = 'PENDING', attempts = 0, window_start = ?, next_attempt_at = ?, delivered_at = null,
		       url = w.url
		from events e, webhook_endpoints w
		where e.merchant_id = ? and e.event_id = ? and d.merchant_id = e.merchant_id and d.event_seq = e.event_seq
		  and d.endpoint_no > 1 and w.merchant_id = d.merchant_id and w.endpoint_no = d.endpoint_no and w.deleted_at is null
		  and `+endpointTakesSQL,
		now, now, merchant, eventID).Exec(ctx)
	if err != nil {
		return nil, ledger.MapError(err)
	}
	info, err := s.Event(ctx, merchant, eventID)
	if err != nil {
		return nil, err
	}
	n1, _ := one.RowsAffected()
	if n, _ := others.RowsAffected(); n1+n == 0 {
		return nil, postings.ReasonErrorf(postings.ESTATE, postings.ReasonNoCallbackURL,
			"event %s has no callback URL to be sent to: set the merchant's (PUT /shop/webhook), or enable an endpoint that takes it", eventID)
	}
	return info, nil
}

// ReplayFailed puts failed deliveries back to pending with a new window,
// to the event's own URL or else the merchant's current one, oldest first: those of events created in r's range (every one for the
// zero range), at most r.Limit (ReplayFailedMax when ≤ 0). It reports
// whether failed deliveries of the range remain. Repeating it is safe: a
// replayed delivery is no longer failed.
func (s *Store) ReplayFailed(ctx context.Context, merchant int64, r FailedRange) (ReplayResult, error) {
	if r.Limit <= 0 || r.Limit > ReplayFailedMax {
		r.Limit = ReplayFailedMax
	}
	var from, to *time.Time
	if !r.From.IsZero() {
		from = &r.From
	}
	if !r.To.IsZero() {
		to = &r.To
	}
	now := s.l.Now()
	url, err := s.callbackURL(ctx, merchant)
	if err != nil {
		return ReplayResult{}, err
	}
	var out struct {
		Replayed int64 `bun:"replayed"`
		More     bool  `bun:"more"`
	}
	// One more candidate than the limit tells whether some remain. The
	// candidates walk deliveries_status_idx in event order.
	err = s.l.DB().NewRaw(`
		with cand as (
			-- Endpoint one's URL is the event's own or the merchant's now;
			-- another endpoint's is its URL now (none: deleted, not replayed).
			select d.merchant_id, d.event_seq, d.endpoint_no,
			       case when d.endpoint_no = 1 then coalesce(e.callback_url, ?::text) else w.url end as url
			from deliveries d
			join events e on e.merchant_id = d.merchant_id and e.event_seq = d.event_seq
			left join webhook_endpoints w on w.merchant_id = d.merchant_id and w.endpoint_no = d.endpoint_no and w.deleted_at is null
			where d.merchant_id = ? and d.status = 'FAILED' and (d.endpoint_no = 1 or w.url is not null)
			  -- Only to an endpoint that takes the event now; an event's own
			  -- URL (endpoint one's row) whatever endpoint one's settings.
			  and ((d.endpoint_no = 1 and e.callback_url is not null) or `+endpointTakesSQL+`)
			  and (?::timestamptz is null or e.created_at >= ?::timestamptz)
			  and (?::timestamptz is null or e.created_at < ?::timestamptz)
			order by d.event_seq, d.endpoint_no
			limit ?
		), picked as (
			select * from cand order by event_seq, endpoint_no limit ?
		), upd as (
			update deliveries d set status = 'PENDING', attempts = 0, window_start = ?, next_attempt_at = ?, delivered_at = null,
			       url = coalesce(p.url, d.url)
			from picked p
			where d.merchant_id = p.merchant_id and d.event_seq = p.event_seq and d.endpoint_no = p.endpoint_no and d.status = 'FAILED'
			returning 1
		)
		select (select count(*) from upd) as replayed, (select count(*) from cand) > ? as more`,
		url, merchant, from, from, to, to, r.Limit+1, r.Limit, now, now, r.Limit).Scan(ctx, &out)
	if err != nil {
		return ReplayResult{}, ledger.MapError(err)
	}
	return ReplayResult{Replayed: out.Replayed, More: out.More}, nil
}

// endpointTakesSQL tells whether the endpoint w takes the event e now:
// enabled, and selecting e's type (or every type). Replays send only to
// such endpoints, as new events go only to them; an event's own
// callback_url (endpoint one's row) is sent whatever endpoint one's
// settings (docs/callbacks.md, "Webhook endpoints").
const endpointTakesSQL = `(w.enabled and (w.event_types is null or e.event_type = any (w.event_types)))`

// Signing is how to sign an attempt of d: both schemes (Sender.SendSigned).
func (d *Delivery) Signing() Signing {
	return Signing{Keys: d.SigningKeys(), EventID: d.EventID, WebhookSecrets: d.WebhookSecrets}
}

// SigningKeys are the keys to sign d with, oldest first (Sender.Send).
func (d *Delivery) SigningKeys() []string {
	if d.PreviousKey != "" {
		return []string{d.PreviousKey, d.PrivateKey}
	}
	return []string{d.PrivateKey}
}

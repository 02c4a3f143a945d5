package receiver

import (
	"bytes"
	"container/list"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/paygate/gateway/api/client/receiver/signature"
)

// Defaults of Options.
const (
	DefaultBodyBytesMax = 1 << 20 // 1 MiB
	DefaultDedupeSize   = 100_000 // event ids remembered by the default Deduper
)

// Event is the body of a callback. Data is the event's object, left raw:
// a card for card.* events, a remittance for remittance.status; its shape
// is in docs/callbacks.md.
type Event struct {
	EventID   string          `json:"event_id"`   // unique; the same on every retry of the event
	EventType string          `json:"event_type"` // card.created, card.frozen, remittance.status, …
	CreatedAt time.Time       `json:"created_at"` // when the event was written, UTC
	ShopNo    string          `json:"shopNo"`
	Sequence  int64           `json:"sequence"` // per merchant, from 1, without gaps
	Data      json.RawMessage `json:"data"`
}

// Deduper remembers the event ids that were handled. Handler asks Seen
// before calling onEvent and calls Mark only after onEvent succeeded.
// Implementations must be safe for concurrent use. A Deduper backed by the
// merchant's database survives restarts; the in-memory default does not, so
// onEvent should itself be idempotent on EventID.
type Deduper interface {
	Seen(ctx context.Context, eventID string) (bool, error)
	Mark(ctx context.Context, eventID string) error
}

// Options tune Handler. The zero value gives the defaults.
type Options struct {
	// Tolerance for X-Timestamp, either way; DefaultTolerance when ≤ 0.
	Tolerance time.Duration
	// BodyBytesMax bounds the body; DefaultBodyBytesMax when ≤ 0. A larger
	// body is answered 413.
	BodyBytesMax int64
	// Deduper; an in-memory LRU of DefaultDedupeSize ids when nil.
	Deduper Deduper
	// Now is the clock the timestamp is checked against; time.Now when nil.
	Now func() time.Time
	// WebhookSecrets, when given (whsec_…, at most KeysMax: the old and the
	// new one during a roll), make the handler verify the Standard
	// Webhooks headers too (webhook-id, webhook-timestamp,
	// webhook-signature; VerifyStandard): a callback must then pass both
	// schemes, and its webhook-id must be its event_id. HandlerStandard
	// verifies this scheme alone.
	WebhookSecrets []string
}

// Handler returns the reference callback handler. For each POST it:
//
//  1. answers 400 when X-Sign or X-Timestamp is missing;
//  2. reads the body up to Options.BodyBytesMax (413 beyond);
//  3. verifies with Verify: 401 {"code":401,"message":"bad signature"} on a
//     mismatch, 401 "stale timestamp" on a timestamp out of tolerance;
//  4. decodes the Event (400 if it is not one JSON object with an event_id);
//  5. answers {"code":200,"message":"duplicate"} for an event_id already
//     handled, without calling onEvent;
//  6. calls onEvent; an error answers 500 {"code":500,...}, so the gateway
//     retries, and the id is not recorded;
//  7. records the id and answers 200 {"code":200,"message":"ok"}.
//
// A second delivery of an event whose onEvent is still running answers 409,
// so the gateway retries it later. onEvent gets the request's context and
// should return within a few seconds: the gateway waits 5 seconds at most.
// Handler panics when privateKey is empty.
func Handler(privateKey string, opts Options, onEvent func(ctx context.Context, e Event) error) http.Handler {
	if privateKey == "" {
		panic("receiver: Handler needs the merchant's private key")
	}
	return HandlerKeys([]string{privateKey}, opts, onEvent)
}

// HandlerKeys is Handler with several keys: a callback is genuine when any
// of them signed it (VerifyKeys, X-Sign or X-Signatures). During a roll of
// the signing key, give it the old key and the new one; once the overlap
// has ended, the new one alone. It panics without a key, with an empty
// key, or with more than KeysMax keys.
func HandlerKeys(keys []string, opts Options, onEvent func(ctx context.Context, e Event) error) http.Handler {
	if len(keys) == 0 || len(keys) > KeysMax {
		panic("receiver: HandlerKeys needs 1 to 4 private keys")
	}
	for _, k := range keys {
		if k == "" {
			panic("receiver: HandlerKeys needs non-empty private keys")
		}
	}
	return newHandler(keys, opts, onEvent)
}

// HandlerStandard is the reference handler for a receiver that verifies
// the Standard Webhooks scheme alone (docs/callbacks.md, "Standard
// Webhooks"), with the merchant's webhook secrets (whsec_…; the old and the
// new one during a roll): webhook-id, webhook-timestamp and
// webhook-signature are required (400 without), verified with
// VerifyStandard (401 on a mismatch or a stale timestamp), and webhook-id
// must be the body's event_id. The rest is Handler's. It panics without a
// secret, with a malformed one, or with more than KeysMax.
func HandlerStandard(secrets []string, opts Options, onEvent func(ctx context.Context, e Event) error) http.Handler {
	opts.WebhookSecrets = secrets
	return newHandler(nil, opts, onEvent)
}

func newHandler(keys []string, opts Options, onEvent func(ctx context.Context, e Event) error) http.Handler {
	if len(keys) == 0 && len(opts.WebhookSecrets) == 0 {
		panic("receiver: a handler needs private keys or webhook secrets")
	}
	if len(opts.WebhookSecrets) > KeysMax {
		panic("receiver: at most 4 webhook secrets")
	}
	for _, s := range opts.WebhookSecrets {
		if signature.CheckSecret(s) != nil {
			panic("receiver: a webhook secret must be whsec_ and base64 (from `gateway webhook secret roll`)")
		}
	}
	if onEvent == nil {
		panic("receiver: Handler needs an onEvent function")
	}
	if opts.BodyBytesMax <= 0 {
		opts.BodyBytesMax = DefaultBodyBytesMax
	}
	if opts.Deduper == nil {
		opts.Deduper = NewMemoryDeduper(DefaultDedupeSize)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &handler{keys: append([]string(nil), keys...), opts: opts, onEvent: onEvent, inFlight: map[string]struct{}{}}
}

type handler struct {
	keys    []string
	opts    Options
	onEvent func(context.Context, Event) error

	mu       sync.Mutex
	inFlight map[string]struct{}
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		answer(w, http.StatusMethodNotAllowed, "method not allowed")
		return
	}
	if len(h.keys) > 0 && (r.Header.Get(HeaderSign) == "" || r.Header.Get(HeaderTimestamp) == "") {
		answer(w, http.StatusBadRequest, "missing X-Sign or X-Timestamp")
		return
	}
	stdID := r.Header.Get(HeaderWebhookID)
	if len(h.opts.WebhookSecrets) > 0 &&
		(stdID == "" || r.Header.Get(HeaderWebhookTimestamp) == "" || r.Header.Get(HeaderWebhookSignature) == "") {
		answer(w, http.StatusBadRequest, "missing webhook-id, webhook-timestamp or webhook-signature")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.opts.BodyBytesMax))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			answer(w, http.StatusRequestEntityTooLarge, "body too large")
			return
		}
		answer(w, http.StatusBadRequest, "cannot read body")
		return
	}
	if status, msg := h.verify(r.Header, body); status != 0 {
		answer(w, status, msg)
		return
	}
	e, err := decodeEvent(body)
	if err != nil || (len(h.opts.WebhookSecrets) > 0 && e.EventID != stdID) {
		answer(w, http.StatusBadRequest, "bad payload")
		return
	}
	ctx := r.Context()
	if !h.begin(e.EventID) {
		answer(w, http.StatusConflict, "in progress")
		return
	}
	defer h.end(e.EventID)
	seen, err := h.opts.Deduper.Seen(ctx, e.EventID)
	if err != nil {
		answer(w, http.StatusInternalServerError, "dedupe failed")
		return
	}
	if seen {
		answer(w, http.StatusOK, "duplicate")
		return
	}
	if err := h.onEvent(ctx, e); err != nil {
		answer(w, http.StatusInternalServerError, "event not processed")
		return
	}
	// The event is handled: a failure to record it only risks one more
	// call of onEvent on a redelivery, so it still answers ok.
	_ = h.opts.Deduper.Mark(ctx, e.EventID)
	answer(w, http.StatusOK, "ok")
}

// verify checks every scheme the handler was given (both when it holds
// keys and secrets); 0 when the callback passes, else the answer.
func (h *handler) verify(hd http.Header, body []byte) (int, string) {
	now := h.opts.Now()
	var errs []error
	if len(h.keys) > 0 {
		errs = append(errs, VerifyKeys(body, hd.Get(HeaderTimestamp), hd.Get(HeaderSign), hd.Get(HeaderSignatures),
			h.keys, now, h.opts.Tolerance))
	}
	if len(h.opts.WebhookSecrets) > 0 {
		errs = append(errs, VerifyStandard(body, hd.Get(HeaderWebhookID), hd.Get(HeaderWebhookTimestamp),
			hd.Get(HeaderWebhookSignature), h.opts.WebhookSecrets, now, h.opts.Tolerance))
	}
	for _, err := range errs {
		switch {
		case err == nil:
		case errors.Is(err, ErrStaleTimestamp):
			return http.StatusUnauthorized, "stale timestamp"
		case errors.Is(err, ErrMissingHeaders), errors.Is(err, signature.ErrMissingStandardHeaders):
			return http.StatusBadRequest, "missing signature headers"
		default:
			return http.StatusUnauthorized, "bad signature"
		}
	}
	return 0, ""
}

// begin claims an event id for this process; false when it is in flight.
func (h *handler) begin(id string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, busy := h.inFlight[id]; busy {
		return false
	}
	h.inFlight[id] = struct{}{}
	return true
}

func (h *handler) end(id string) {
	h.mu.Lock()
	delete(h.inFlight, id)
	h.mu.Unlock()
}

var errBadEvent = errors.New("receiver: body is not an event")

// decodeEvent reads exactly one JSON object with an event_id; unknown
// fields are allowed (the gateway may add some), trailing data is not.
func decodeEvent(body []byte) (Event, error) {
	var e Event
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&e); err != nil {
		return Event{}, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return Event{}, errBadEvent
	}
	if e.EventID == "" || e.EventType == "" {
		return Event{}, errBadEvent
	}
	return e, nil
}

func answer(w http.ResponseWriter, status int, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	b, _ := json.Marshal(struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{status, message})
	_, _ = w.Write(append(b, '\n'))
}

// MemoryDeduper is an in-memory Deduper that remembers the most recently
// used ids, up to a bound; it is safe for concurrent use.
type MemoryDeduper struct {
	mu    sync.Mutex
	size  int
	order *list.List // of string, most recent first
	ids   map[string]*list.Element
}

// NewMemoryDeduper remembers up to size ids (DefaultDedupeSize when ≤ 0).
func NewMemoryDeduper(size int) *MemoryDeduper {
	if size <= 0 {
		size = DefaultDedupeSize
	}
	return &MemoryDeduper{size: size, order: list.New(), ids: map[string]*list.Element{}}
}

// Seen reports whether id was marked and not yet evicted.
func (d *MemoryDeduper) Seen(_ context.Context, id string) (bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	el, ok := d.ids[id]
	if ok {
		d.order.MoveToFront(el)
	}
	return ok, nil
}

// Mark records id, evicting the least recently used id beyond the bound.
func (d *MemoryDeduper) Mark(_ context.Context, id string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if el, ok := d.ids[id]; ok {
		d.order.MoveToFront(el)
		return nil
	}
	d.ids[id] = d.order.PushFront(id)
	for d.order.Len() > d.size {
		last := d.order.Back()
		d.order.Remove(last)
		delete(d.ids, last.Value.(string))
	}
	return nil
}

// Len returns the number of ids remembered.
func (d *MemoryDeduper) Len() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.order.Len()
}

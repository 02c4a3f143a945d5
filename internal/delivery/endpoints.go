package delivery

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/paygate/gateway/api/client/receiver/signature"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// Webhook endpoints (webhook_endpoints; docs/callbacks.md, "Webhook
// endpoints"): up to EndpointsMax per merchant, each with a URL, the event
// types it receives (all when none are named), its own Standard Webhooks
// secret and an enabled flag. Endpoint one is the merchant's default URL
// (merchants.callback_url, set by PUT /shop/webhook or by updating endpoint
// one) and keeps the merchant's secret (webhook_secrets). It may be
// disabled and select types like any endpoint (its deliveries, written by
// the ledger's outbox, are filtered by the trigger of
// sql/…_webhook_endpoint_one.sql), but not deleted. The other endpoints' deliveries are
// written with each event by the migration's trigger. URLs are checked by
// the callers with the callback-URL rules (the allow list is the
// configuration's); the store checks their length again.

// EndpointsMax is how many live webhook endpoints a merchant may have.
const EndpointsMax = 16

// EndpointDescriptionMax bounds an endpoint's description, in bytes.
const EndpointDescriptionMax = 200

// endpointURLMax is the callback URLs' bound (callbackurl's too).
const endpointURLMax = 2048

// EventTypes are the event types an endpoint may select
// (docs/callbacks.md, section 1): the constants of the domains that emit
// them, which this package does not import.
var EventTypes = []string{
	"card.created", "card.frozen", "card.unfrozen", "card.cancelled", "card.refunded",
	"authorization.approved", "authorization.declined", "authorization.cleared",
	"authorization.reversed", "authorization.expired", "remittance.status",
}

// Endpoint is one of a merchant's webhook endpoints.
type Endpoint struct {
	ID string `json:"id" bun:"endpoint_id"`
	No int    `json:"no" bun:"endpoint_no"`
	// URL is "" for endpoint one when the merchant has no default URL.
	URL string `json:"url" bun:"url"`
	// EventTypes nil: every event type.
	EventTypes  []string   `json:"eventTypes" bun:"event_types,array"`
	Enabled     bool       `json:"enabled" bun:"enabled"`
	Description string     `json:"description" bun:"description"`
	CreatedAt   time.Time  `json:"createdAt" bun:"created_at"`
	RolledAt    *time.Time `json:"-" bun:"rolled_at"`
	// PreviousSecretValidUntil is the end of a secret roll's overlap.
	PreviousSecretValidUntil *time.Time `json:"previousSecretValidUntil,omitempty" bun:"secret_prev_until"`
}

// Default tells whether e is endpoint one, the merchant's default URL.
func (e *Endpoint) Default() bool { return e.No == 1 }

// EndpointSpec is a new endpoint, or the changes to one (a nil field is
// left as it is; EventTypes pointing to an empty list selects every type).
type EndpointSpec struct {
	URL         *string
	EventTypes  *[]string
	Enabled     *bool
	Description *string
}

// CheckEventTypes refuses a selection with an unknown or repeated type, or
// more types than exist, naming field.
func CheckEventTypes(field string, types []string) error {
	if len(types) > len(EventTypes) {
		return postings.FieldErrorf(field, "has more than %d event types", len(EventTypes))
	}
	for i, t := range types {
		if !slices.Contains(EventTypes, t) {
			return postings.FieldErrorf(field, "%q is not an event type: one of %s", clip(t), strings.Join(EventTypes, ", "))
		}
		if slices.Contains(types[:i], t) {
			return postings.FieldErrorf(field, "names %s twice", t)
		}
	}
	return nil
}

// clip keeps an echoed input short and printable.
func clip(s string) string {
	if len(s) > 64 {
		s = s[:64]
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e {
			return '?'
		}
		return r
	}, s)
}

func (sp *EndpointSpec) check() error {
	if sp.URL != nil && (len(*sp.URL) > endpointURLMax) {
		return postings.FieldErrorf("url", "must be at most %d bytes", endpointURLMax)
	}
	if sp.Description != nil && len(*sp.Description) > EndpointDescriptionMax {
		return postings.FieldErrorf("description", "must be at most %d bytes", EndpointDescriptionMax)
	}
	if sp.EventTypes != nil {
		return CheckEventTypes("eventTypes", *sp.EventTypes)
	}
	return nil
}

// typesArg is the stored form of a selection: NULL for every type.
func typesArg(types *[]string) any {
	if types == nil || len(*types) == 0 {
		return nil
	}
	return pgdialect.Array(*types)
}

const endpointColumns = `w.endpoint_id, w.endpoint_no, coalesce(case when w.endpoint_no = 1 then m.callback_url else w.url end, '') as url,
	w.event_types, w.enabled, w.description, w.created_at, coalesce(w.rolled_at, s.rolled_at) as rolled_at,
	coalesce(w.secret_prev_until, s.secret_prev_until) as secret_prev_until`

const endpointFrom = `from webhook_endpoints w join merchants m on m.id = w.merchant_id
	left join webhook_secrets s on w.endpoint_no = 1 and s.merchant_id = w.merchant_id`

// Endpoints lists the merchant's live endpoints, endpoint one first.
func (s *Store) Endpoints(ctx context.Context, merchant int64) ([]Endpoint, error) {
	out := []Endpoint{}
	err := s.l.DB().NewRaw(`select `+endpointColumns+` `+endpointFrom+`
		where w.merchant_id = ? and w.deleted_at is null order by w.endpoint_no`, merchant).Scan(ctx, &out)
	return out, ledger.MapError(err)
}

// Endpoint reads one live endpoint; another merchant's, like an unknown or
// deleted one, is ENOTFOUND webhook_endpoint.
func (s *Store) Endpoint(ctx context.Context, merchant int64, id string) (*Endpoint, error) {
	if err := CheckEndpointID("endpointId", id); err != nil {
		return nil, err
	}
	return s.endpointIn(ctx, s.l.DB(), merchant, id)
}

func (s *Store) endpointIn(ctx context.Context, db bun.IDB, merchant int64, id string) (*Endpoint, error) {
	var out Endpoint
	err := db.NewRaw(`select `+endpointColumns+` `+endpointFrom+`
		where w.merchant_id = ? and w.endpoint_id = ? and w.deleted_at is null`, merchant, id).Scan(ctx, &out)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errNoEndpoint(id)
	}
	if err != nil {
		return nil, ledger.MapError(err)
	}
	return &out, nil
}

// errNoEndpoint is the one answer for an unknown endpoint and another
// merchant's: the message names no id, so nothing tells them apart.
func errNoEndpoint(string) error {
	return &postings.Error{Code: postings.ENOTFOUND, Reason: postings.ReasonWebhookEndpoint, Message: "webhook endpoint not found"}
}

// CheckEndpointID refuses what cannot be an endpoint id (we_ and 24 of
// [a-z0-9]).
func CheckEndpointID(field, id string) error {
	rest, ok := strings.CutPrefix(id, "we_")
	if !ok || len(rest) != 24 || strings.Trim(rest, "abcdefghijklmnopqrstuvwxyz0123456789") != "" {
		return postings.FieldErrorf(field, "must be a webhook endpoint id (we_ and 24 letters or digits)")
	}
	return nil
}

// newEndpointID is we_ and 24 characters of [a-z2-7] (crypto/rand).
func newEndpointID() string { return "we_" + strings.ToLower(rand.Text()[:24]) }

// CreatedEndpoint is a new endpoint with its secret, shown once.
type CreatedEndpoint struct {
	Endpoint
	Secret string `json:"secret"`
}

// CreateEndpoint adds an endpoint with its own new secret; the URL is
// required (checked by the caller with the callback-URL rules). The 17th
// live endpoint is ELIMIT webhook_endpoints_max. Concurrent creations of
// one merchant queue on its endpoint one's row, so the bound holds.
func (s *Store) CreateEndpoint(ctx context.Context, merchant int64, sp EndpointSpec) (*CreatedEndpoint, error) {
	if sp.URL == nil || *sp.URL == "" {
		return nil, postings.FieldErrorf("url", "is required")
	}
	if err := sp.check(); err != nil {
		return nil, err
	}
	if s.sealer == nil {
		return nil, errors.New("delivery: no data key configured")
	}
	secret, err := signature.NewSecret()
	if err != nil {
		return nil, err
	}
	enabled, desc := true, ""
	if sp.Enabled != nil {
		enabled = *sp.Enabled
	}
	if sp.Description != nil {
		desc = *sp.Description
	}
	var out *CreatedEndpoint
	err = s.l.DB().RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var row struct {
			ShopNo string `bun:"shop_no"`
			Live   int    `bun:"live"`
			Next   int    `bun:"next"`
		}
		if err := tx.NewRaw(`select m.shop_no from webhook_endpoints w join merchants m on m.id = w.merchant_id
			where w.merchant_id = ? and w.endpoint_no = 1 for update of w`, merchant).Scan(ctx, &row.ShopNo); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return postings.ReasonErrorf(postings.ENOTFOUND, postings.ReasonMerchant, "merchant not found")
			}
			return err
		}
		if err := tx.NewRaw(`select count(*) filter (where deleted_at is null) as live, max(endpoint_no) + 1 as next
			from webhook_endpoints where merchant_id = ?`, merchant).Scan(ctx, &row.Live, &row.Next); err != nil {
			return err
		}
		if row.Live >= EndpointsMax {
			return postings.ReasonErrorf(postings.ELIMIT, postings.ReasonWebhookEndpointsMax,
				"a merchant has at most %d webhook endpoints: delete one first", EndpointsMax)
		}
		now := s.l.Now()
		id := newEndpointID()
		sealed := s.sealer.Seal([]byte(secret), endpointSecretContext(row.ShopNo, row.Next))
		if _, err := tx.NewRaw(`insert into webhook_endpoints (merchant_id, endpoint_no, endpoint_id, url, event_types, enabled,
			description, secret_sealed, rolled_at, created_at) values (?, ?, ?, ?, ?::text[], ?, ?, ?, ?, ?)`,
			merchant, row.Next, id, *sp.URL, typesArg(sp.EventTypes), enabled, desc, sealed, now, now).Exec(ctx); err != nil {
			return err
		}
		e, err := s.endpointIn(ctx, tx, merchant, id)
		if err != nil {
			return err
		}
		out = &CreatedEndpoint{Endpoint: *e, Secret: secret}
		return nil
	})
	if err != nil {
		return nil, ledger.MapError(err)
	}
	return out, nil
}

// UpdateEndpoint changes an endpoint. Endpoint one's URL is the merchant's
// default URL, changed through the merchant's settings (the caller does
// that; a URL given here for it is ignored); its event types, enabled flag
// and description change here like any endpoint's (the migration's trigger
// on deliveries applies them to the outbox's rows). Deliveries already
// written keep their URL; new events follow the new settings.
func (s *Store) UpdateEndpoint(ctx context.Context, merchant int64, id string, sp EndpointSpec) (*Endpoint, error) {
	e, err := s.Endpoint(ctx, merchant, id)
	if err != nil {
		return nil, err
	}
	if err := sp.check(); err != nil {
		return nil, err
	}
	if e.Default() {
		sp.URL = nil // endpoint one's row has no URL: it is merchants.callback_url
	} else if sp.URL != nil && *sp.URL == "" {
		return nil, postings.FieldErrorf("url", "is required (delete the endpoint, or disable it)")
	}
	_, err = s.l.DB().NewRaw(`update webhook_endpoints set url = coalesce(?, url),
		event_types = case when ? then ?::text[] else event_types end,
		enabled = coalesce(?, enabled), description = coalesce(?, description)
		where merchant_id = ? and endpoint_id = ? and deleted_at is null`,
		sp.URL, sp.EventTypes != nil, typesArg(sp.EventTypes), sp.Enabled, sp.Description, merchant, id).Exec(ctx)
	if err != nil {
		return nil, ledger.MapError(err)
	}
	return s.Endpoint(ctx, merchant, id)
}

// DeleteEndpoint removes an endpoint other than endpoint one: it receives
// no more events, and its pending deliveries end as failed ("endpoint
// deleted"). Its row stays (its past deliveries name it); its number is
// never given again. Endpoint one is refused (disable it instead).
func (s *Store) DeleteEndpoint(ctx context.Context, merchant int64, id string) error {
	e, err := s.Endpoint(ctx, merchant, id)
	if err != nil {
		return err
	}
	if e.Default() {
		return postings.FieldErrorf("endpointId", "endpoint one is the merchant's default URL and cannot be deleted: disable it (enabled false) or clear its url")
	}
	now := s.l.Now()
	return ledger.MapError(s.l.DB().RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewRaw(`update webhook_endpoints set deleted_at = ?, secret_sealed = ?, secret_prev_sealed = null,
			secret_prev_until = null where merchant_id = ? and endpoint_no = ?`, now, []byte{}, merchant, e.No).Exec(ctx); err != nil {
			return err
		}
		_, err := tx.NewRaw(`update deliveries set status = 'FAILED', next_attempt_at = null, last_error = 'endpoint deleted'
			where merchant_id = ? and endpoint_no = ? and status = 'PENDING'`, merchant, e.No).Exec(ctx)
		return err
	}))
}

// RollEndpointSecret makes an endpoint a new secret and returns it (the
// only time it is readable), with the rules of RollWebhookSecret (whose
// secret is endpoint one's).
func (s *Store) RollEndpointSecret(ctx context.Context, merchant int64, id string, overlap time.Duration) (*SecretRoll, error) {
	e, err := s.Endpoint(ctx, merchant, id)
	if err != nil {
		return nil, err
	}
	if e.Default() {
		return s.RollWebhookSecret(ctx, merchant, overlap)
	}
	return s.rollSecret(ctx, merchant, e.No, overlap)
}

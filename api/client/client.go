package client

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"net/http"
	"net/url"
	"strings"
)

// Client calls the /shop API as one merchant: every request carries the
// merchant's X-Shop-No and X-Public-Key, every POST an Idempotency-Key.
// It is safe for concurrent use.
type Client struct {
	caller Caller
}

// Config is what New needs.
type Config struct {
	// BaseURL is the gateway: https://host:port.
	BaseURL string
	// ShopNo and PublicKey are the merchant's credentials (SH…, pk_…).
	ShopNo, PublicKey string
	// HTTPClient sends the requests: NewHTTPClient(nil, 16) when nil. Give
	// one that trusts the gateway's certificate (a self-signed one in
	// development: NewHTTPClient with a pool holding it).
	HTTPClient *http.Client
	// Retry is the retry policy of every call (zero: the defaults).
	Retry RetryPolicy
	// UserAgent, when set, is sent with every request.
	UserAgent string
	// OnAttempt, when set, is told of every attempt (logs, metrics).
	OnAttempt func(Attempt)
	// APIVersion, when set, is sent as X-Api-Version with every request:
	// the answers then keep that version's shape whatever the merchant is
	// pinned to (docs/versioning.md). WithAPIVersion overrides it per call.
	APIVersion string
}

// New returns a client of the /shop API.
func New(cfg Config) (*Client, error) {
	base, err := parseBaseURL(cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	if cfg.ShopNo == "" || cfg.PublicKey == "" {
		return nil, errors.New("client: ShopNo and PublicKey are required")
	}
	shop, key, version := cfg.ShopNo, cfg.PublicKey, cfg.APIVersion
	return &Client{caller: Caller{
		BaseURL:   base,
		HTTP:      cfg.HTTPClient,
		Retry:     cfg.Retry,
		UserAgent: cfg.UserAgent,
		OnAttempt: cfg.OnAttempt,
		Authorize: func(h http.Header) {
			h.Set("X-Shop-No", shop)
			h.Set("X-Public-Key", key)
			if version != "" && h.Get("X-Api-Version") == "" {
				h.Set("X-Api-Version", version)
			}
		},
	}}, nil
}

// CallOption adjusts one call.
type CallOption func(*callConfig)

type callConfig struct {
	key       string
	noKey     bool
	retry     *RetryPolicy
	onAttempt func(Attempt)
	requestID string
	version   string
}

// WithIdempotencyKey sends key as the POST's Idempotency-Key (1 to 255
// printable ASCII characters). Without it, a POST gets a new random key,
// which a failed call's *Error carries (IdempotencyKey) for a later retry.
func WithIdempotencyKey(key string) CallOption {
	return func(c *callConfig) { c.key = key }
}

// WithoutIdempotencyKey sends the POST without an Idempotency-Key. It is
// then never retried: without a key a repeat could act twice.
func WithoutIdempotencyKey() CallOption {
	return func(c *callConfig) { c.noKey = true }
}

// WithRetry replaces the client's retry policy for this call.
func WithRetry(p RetryPolicy) CallOption {
	return func(c *callConfig) { c.retry = &p }
}

// WithAttemptObserver is told of every attempt of this call.
func WithAttemptObserver(fn func(Attempt)) CallOption {
	return func(c *callConfig) { c.onAttempt = fn }
}

// WithAPIVersion asks for the answer at API version v (X-Api-Version,
// YYYY-MM-DD; docs/versioning.md) instead of the merchant's pinned one.
// Config.APIVersion does it for every call.
func WithAPIVersion(v string) CallOption {
	return func(c *callConfig) { c.version = v }
}

// WithRequestID sends id as X-Request-Id (1 to 128 characters of
// A-Z a-z 0-9 _ . : -), so that the gateway's log lines carry it.
func WithRequestID(id string) CallOption {
	return func(c *callConfig) { c.requestID = id }
}

// NewIdempotencyKey is a new random key ("idem_" and 26 characters): store
// it with the operation before calling, to retry with it after a crash.
func NewIdempotencyKey() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand does not fail on the platforms Go supports
	return "idem_" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b))
}

// operation is one endpoint of the spec (docs/openapi.yaml).
type operation struct {
	id     string // operationId
	method string
	path   string
}

// The /shop operations, by their operationId in docs/openapi.yaml.
var (
	opGetAccount       = operation{"getAccount", http.MethodGet, "/shop/account"}
	opListBINs         = operation{"listBINs", http.MethodGet, "/shop/card/bin/list"}
	opCreateCard       = operation{"createCard", http.MethodPost, "/shop/card/create"}
	opGetCard          = operation{"getCard", http.MethodGet, "/shop/card/info"}
	opGetCardBalance   = operation{"getCardBalance", http.MethodGet, "/shop/card/balance"}
	opGetCardBalances  = operation{"getCardBalances", http.MethodPost, "/shop/card/balance/batch"}
	opFreezeCard       = operation{"freezeCard", http.MethodPost, "/shop/card/freeze"}
	opUnfreezeCard     = operation{"unfreezeCard", http.MethodPost, "/shop/card/unfreeze"}
	opCancelCard       = operation{"cancelCard", http.MethodPost, "/shop/card/cancel"}
	opTransferCard     = operation{"transferCard", http.MethodPost, "/shop/card/transfer"}
	opRemittanceFields = operation{"getRemittanceDynamicFields", http.MethodGet, "/shop/remittance/dynamic-fields"}
	opCreateRemittance = operation{"createRemittance", http.MethodPost, "/shop/remittance/create"}
	opGetRemittance    = operation{"getRemittance", http.MethodGet, "/shop/remittance/query"}
	opListBill         = operation{"listBill", http.MethodGet, "/shop/bill/list"}
	opListCards        = operation{"listCards", http.MethodGet, "/shop/card/list"}
	// Webhooks and keys.
	opGetWebhook                = operation{"getWebhook", http.MethodGet, "/shop/webhook"}
	opSetWebhook                = operation{"setWebhook", http.MethodPut, "/shop/webhook"}
	opListWebhookEvents         = operation{"listWebhookEvents", http.MethodGet, "/shop/webhook/events"}
	opReplayWebhookEvent        = operation{"replayWebhookEvent", http.MethodPost, "/shop/webhook/events/replay"}
	opReplayFailedWebhookEvents = operation{"replayFailedWebhookEvents", http.MethodPost, "/shop/webhook/events/replay-failed"}
	opGetWebhookEvent           = operation{"getWebhookEvent", http.MethodGet, "/shop/webhook/events/{eventId}"}
	opRollWebhookSecret         = operation{"rollWebhookSecret", http.MethodPost, "/shop/webhook/secret/roll"}
	opGetKeys                   = operation{"getKeys", http.MethodGet, "/shop/keys"}
	opRollPublicKey             = operation{"rollPublicKey", http.MethodPost, "/shop/keys/public/roll"}
	opRollSigningKey            = operation{"rollSigningKey", http.MethodPost, "/shop/keys/signing/roll"}
	shopOperationsTable         = append([]operation{opGetAccount, opListBINs, opCreateCard, opGetCard, opGetCardBalance, opGetCardBalances,
		opFreezeCard, opUnfreezeCard, opCancelCard, opTransferCard, opRemittanceFields, opCreateRemittance, opGetRemittance, opListBill, opListCards,
		opGetWebhook, opSetWebhook, opListWebhookEvents, opReplayWebhookEvent, opReplayFailedWebhookEvents,
		opGetWebhookEvent, opRollWebhookSecret,
		opGetKeys, opRollPublicKey, opRollSigningKey},
		append(append(sandboxOperations, endpointOperations...), reportOperations...)...)
)

// call sends one operation. A GET is always safe to retry; a POST carries
// an Idempotency-Key (the caller's or a new one) and is retried only then.
func (c *Client) call(ctx context.Context, op operation, q url.Values, body any, out any, opts []CallOption) error {
	var cc callConfig
	for _, o := range opts {
		o(&cc)
	}
	req := &Request{Method: op.method, Path: op.path, Query: q, Body: body, Retry: cc.retry, OnAttempt: cc.onAttempt,
		// PUT sets a value: repeating it gives the same state.
		Retryable: op.method == http.MethodGet || op.method == http.MethodPut}
	if op.method == http.MethodPost && !cc.noKey {
		req.IdempotencyKey = cc.key
		if req.IdempotencyKey == "" {
			req.IdempotencyKey = NewIdempotencyKey()
		}
		req.Retryable = true
	}
	req.Header = cc.header()
	return c.caller.Do(ctx, req, out)
}

// header is the call's own headers: its request id and API version.
func (cc *callConfig) header() http.Header {
	h := http.Header{}
	if cc.requestID != "" {
		h.Set("X-Request-Id", cc.requestID)
	}
	if cc.version != "" {
		h.Set("X-Api-Version", cc.version)
	}
	if len(h) == 0 {
		return nil
	}
	return h
}

// Caller is the client's transport, for an endpoint this package does not
// have yet: it authenticates as the merchant and retries as configured.
func (c *Client) Caller() *Caller { return &c.caller }

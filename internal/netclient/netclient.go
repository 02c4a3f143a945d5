// Package netclient is the typed client of the gateway's internal network
// API (docs/openapi-internal.yaml): what the card processor and the rail
// partners send. It is not for merchants, hence internal. It shares the
// transport of the merchant client (api/client.Caller): the envelope, the
// typed *client.Error, exact decimals and the retry policy. Every message
// carries its messageId, on which the gateway de-duplicates, so every call
// is safe to retry with the same message.
package netclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/paygate/gateway/api/client"
)

// Client calls the internal API with its bearer token.
type Client struct {
	caller client.Caller
}

// Config is what New needs.
type Config struct {
	// BaseURL is the internal listener: https://127.0.0.1:8444.
	BaseURL string
	// Token is the bearer token (GATEWAY_INTERNAL_TOKEN or the data
	// directory's internal-token).
	Token string
	// HTTPClient sends the requests (client.NewHTTPClient's when nil).
	HTTPClient *http.Client
	// Retry is the policy of every call (zero: client's defaults).
	Retry client.RetryPolicy
	// OnAttempt, when set, is told of every attempt.
	OnAttempt func(client.Attempt)
}

// New returns a client of the internal API.
func New(cfg Config) (*Client, error) {
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, errors.New("netclient: BaseURL must be an http(s) URL such as https://127.0.0.1:8444")
	}
	if cfg.Token == "" {
		return nil, errors.New("netclient: the bearer token is required")
	}
	tok := cfg.Token
	return &Client{caller: client.Caller{
		BaseURL:   strings.TrimRight(u.Scheme+"://"+u.Host+u.Path, "/"),
		HTTP:      cfg.HTTPClient,
		Retry:     cfg.Retry,
		OnAttempt: cfg.OnAttempt,
		Authorize: func(h http.Header) { h.Set("Authorization", "Bearer "+tok) },
	}}, nil
}

// operation is one endpoint of docs/openapi-internal.yaml.
type operation struct {
	id, method, path string
}

var (
	opHealthz       = operation{"internalHealthz", http.MethodGet, "/healthz"}
	opAuthorize     = operation{"authorize", http.MethodPost, "/network/authorize"}
	opClear         = operation{"clear", http.MethodPost, "/network/clear"}
	opReverse       = operation{"reverse", http.MethodPost, "/network/reverse"}
	opRefund        = operation{"refund", http.MethodPost, "/network/refund"}
	opAttempts      = operation{"listAuthorizationAttempts", http.MethodGet, "/network/authorizations"}
	opAuthorization = operation{"getAuthorization", http.MethodGet, "/network/authorizations/{authId}"}
	opRailReport    = operation{"railReport", http.MethodPost, "/rail/report"}
	operationsTable = []operation{opHealthz, opAuthorize, opClear, opReverse, opRefund, opAttempts, opAuthorization, opRailReport}
)

// CallOption adjusts one call.
type CallOption func(*client.Request)

// WithRetry replaces the client's policy for this call.
func WithRetry(p client.RetryPolicy) CallOption {
	return func(r *client.Request) { r.Retry = &p }
}

// WithAttemptObserver is told of every attempt of this call.
func WithAttemptObserver(fn func(client.Attempt)) CallOption {
	return func(r *client.Request) { r.OnAttempt = fn }
}

var errNoMessageID = errors.New("netclient: messageId is required: the gateway de-duplicates on it")

func (c *Client) call(ctx context.Context, op operation, path string, q url.Values, body any, out any, opts []CallOption) error {
	req := &client.Request{Method: op.method, Path: path, Query: q, Body: body, Retryable: true}
	for _, o := range opts {
		o(req)
	}
	return c.caller.Do(ctx, req, out)
}

func (c *Client) post(ctx context.Context, op operation, messageID string, body, out any, opts []CallOption) error {
	if messageID == "" {
		return &client.Error{Err: errNoMessageID}
	}
	return c.call(ctx, op, op.path, nil, body, out, opts)
}

// Authorize is POST /network/authorize. A decline is a success: Approved
// false with its ISO 8583 code.
func (c *Client) Authorize(ctx context.Context, req AuthorizeRequest, opts ...CallOption) (*Decision, error) {
	var out Decision
	if err := c.post(ctx, opAuthorize, req.MessageID, req, &out, opts); err != nil {
		return nil, err
	}
	return &out, nil
}

// Clear is POST /network/clear.
func (c *Client) Clear(ctx context.Context, req ClearRequest, opts ...CallOption) (*HoldResult, error) {
	var out HoldResult
	if err := c.post(ctx, opClear, req.MessageID, req, &out, opts); err != nil {
		return nil, err
	}
	return &out, nil
}

// Reverse is POST /network/reverse (Amount nil: the whole hold).
func (c *Client) Reverse(ctx context.Context, req ReverseRequest, opts ...CallOption) (*HoldResult, error) {
	var out HoldResult
	if err := c.post(ctx, opReverse, req.MessageID, req, &out, opts); err != nil {
		return nil, err
	}
	return &out, nil
}

// Refund is POST /network/refund.
func (c *Client) Refund(ctx context.Context, req RefundRequest, opts ...CallOption) (*Refund, error) {
	var out Refund
	if err := c.post(ctx, opRefund, req.MessageID, req, &out, opts); err != nil {
		return nil, err
	}
	return &out, nil
}

// Attempts is GET /network/authorizations: a card's authorization
// attempts, newest first; limit 0 means the gateway's default (100).
func (c *Client) Attempts(ctx context.Context, cardNo string, limit int, opts ...CallOption) ([]AuthorizationAttempt, error) {
	q := url.Values{"cardNo": {cardNo}}
	if limit != 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var out attemptList
	if err := c.call(ctx, opAttempts, opAttempts.path, q, nil, &out, opts); err != nil {
		return nil, err
	}
	return out.List, nil
}

type attemptList struct {
	List []AuthorizationAttempt `json:"list"`
}

// Authorization is GET /network/authorizations/{authId}.
func (c *Client) Authorization(ctx context.Context, authID string, opts ...CallOption) (*Authorization, error) {
	var out Authorization
	path := strings.Replace(opAuthorization.path, "{authId}", url.PathEscape(authID), 1)
	if err := c.call(ctx, opAuthorization, path, nil, nil, &out, opts); err != nil {
		return nil, err
	}
	return &out, nil
}

// RailReport is POST /rail/report: a rail partner reports an in-flight
// remittance SETTLED or RETURNED.
func (c *Client) RailReport(ctx context.Context, req RailReportRequest, opts ...CallOption) (*RailReport, error) {
	var out RailReport
	if err := c.post(ctx, opRailReport, req.MessageID, req, &out, opts); err != nil {
		return nil, err
	}
	return &out, nil
}

// Healthz is GET /healthz (no token needed, no envelope): nil while the
// process serves HTTP.
func (c *Client) Healthz(ctx context.Context, opts ...CallOption) error {
	req := &client.Request{Method: opHealthz.method, Path: opHealthz.path, Retryable: true,
		Stream: func(resp *http.Response) error { return nil }}
	for _, o := range opts {
		o(req)
	}
	err := c.caller.Do(ctx, req, nil)
	var e *client.Error
	if errors.As(err, &e) && e.Status == http.StatusOK && e.Code == 0 {
		return nil // {"status":"ok"}: JSON, but not an envelope
	}
	if err != nil {
		return fmt.Errorf("netclient: /healthz: %w", err)
	}
	return nil
}

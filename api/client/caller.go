package client

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Caller sends requests to one of the gateway's APIs and decodes the
// envelope {code, message, data} of the answer, with the retries of its
// RetryPolicy. Client (the /shop API) and the internal network API's
// client are both built on it; use it directly only for an endpoint this
// package does not have yet.
type Caller struct {
	// BaseURL is scheme://host:port, without a trailing slash.
	BaseURL string
	// HTTP sends the requests; NewHTTPClient's when nil.
	HTTP *http.Client
	// Retry is the policy of every call that has none of its own.
	Retry RetryPolicy
	// Authorize adds the credentials to every request.
	Authorize func(h http.Header)
	// UserAgent, when set, is sent with every request.
	UserAgent string
	// OnAttempt, when set, is told of every attempt of every call.
	OnAttempt func(Attempt)

	// sleep waits between attempts; tests replace it.
	sleep func(ctx context.Context, d time.Duration) bool
}

// Request is one call.
type Request struct {
	Method string
	Path   string // "/shop/card/create"
	Query  url.Values
	// Body is encoded as JSON once, before the first attempt; nil sends
	// no body.
	Body any
	// IdempotencyKey is sent as the Idempotency-Key header when set.
	IdempotencyKey string
	// Retryable says that sending the request again is safe (a read, or a
	// write the gateway de-duplicates on its key or message id).
	Retryable bool
	// Accept is sent as the Accept header when set.
	Accept string
	// Header holds other headers to send (X-Request-Id).
	Header http.Header
	// Retry replaces the Caller's policy for this call.
	Retry *RetryPolicy
	// OnAttempt, when set, is told of every attempt of this call.
	OnAttempt func(Attempt)
	// Stream, when set, receives the body of a successful answer that is
	// not JSON (the bill's CSV) instead of the envelope decoder. An error
	// it returns is retried like a lost answer unless it wraps
	// ErrStreamStarted (part of the body was already delivered).
	Stream func(resp *http.Response) error
}

// Attempt is one exchange of a call, as an observer sees it.
type Attempt struct {
	N          int // 1 for the first
	Start, End time.Time
	// Status is the HTTP status, 0 without an answer; Code the envelope
	// code, 0 when the body was not an envelope.
	Status int
	Code   Code
	// Envelope: the body was the {code, message, data} envelope.
	Envelope bool
	// Err is the failure of the attempt, nil for a success.
	Err *Error
}

// Response bodies are read up to this many bytes: the largest answer, a
// bill page of 500 lines, is well under it.
const answerBytesMax = 16 << 20

// NewHTTPClient is a client for the gateway: TLS 1.2 or later, trusting
// roots (the system's when nil), keep-alive connections (idleConnsMax per
// host, at least 2) and a 65-second bound per attempt, just over the
// gateway's 60-second budget for a request.
func NewHTTPClient(roots *x509.CertPool, idleConnsMax int) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: roots}
	t.MaxIdleConns = max(idleConnsMax, 2)
	t.MaxIdleConnsPerHost = max(idleConnsMax, 2)
	t.DisableCompression = true
	return &http.Client{Transport: t, Timeout: 65 * time.Second}
}

// Do sends req, with retries as its policy allows, and decodes the data of
// a success into out (when out is not nil). Every failure is an *Error.
func (c *Caller) Do(ctx context.Context, req *Request, out any) error {
	var body []byte
	if req.Body != nil {
		if field := unsetDecimal(req.Body); field != "" {
			return &Error{Field: field, Message: field + ": is required (the Decimal was never set)",
				Err: fmt.Errorf("%w: %s: %w", errNotSent, field, errDecimalUnset), IdempotencyKey: req.IdempotencyKey}
		}
		b, err := json.Marshal(req.Body)
		if err != nil {
			return &Error{Err: fmt.Errorf("%w: encoding it: %w", errNotSent, err), IdempotencyKey: req.IdempotencyKey}
		}
		body = b
	}
	p := c.Retry
	if req.Retry != nil {
		p = *req.Retry
	}
	p = p.withDefaults()
	sleep := c.sleep
	if sleep == nil {
		sleep = sleepCtx
	}
	first := time.Now()
	for n := 1; ; n++ {
		a := c.attempt(ctx, req, body, out)
		a.N = n
		if a.Err != nil {
			a.Err.Attempts = n
			a.Err.IdempotencyKey = req.IdempotencyKey
		}
		if c.OnAttempt != nil {
			c.OnAttempt(a)
		}
		if req.OnAttempt != nil {
			req.OnAttempt(a)
		}
		e := a.Err
		if e == nil {
			return nil
		}
		if !req.Retryable || !p.retryable(e) || n >= p.MaxAttempts || ctx.Err() != nil {
			return e
		}
		wait := p.backoff(n)
		if e.RetryAfter > p.RetryAfterMax {
			return e
		}
		wait = max(wait, e.RetryAfter)
		if p.MaxElapsed > 0 && time.Since(first)+wait > p.MaxElapsed {
			return e
		}
		if !sleep(ctx, wait) {
			return e
		}
	}
}

// attempt is one exchange.
func (c *Caller) attempt(ctx context.Context, req *Request, body []byte, out any) (a Attempt) {
	a.Start = time.Now()
	defer func() { a.End = time.Now() }()
	fail := func(e *Error) Attempt {
		if e.Status == 0 && ctx.Err() != nil {
			e.Err = fmt.Errorf("%w: %w", errContext, ctx.Err())
		}
		a.Err = e
		return a
	}
	u := strings.TrimRight(c.BaseURL, "/") + req.Path
	if len(req.Query) > 0 {
		u += "?" + req.Query.Encode()
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	hr, err := http.NewRequestWithContext(ctx, req.Method, u, rd)
	if err != nil {
		return fail(&Error{Err: fmt.Errorf("%w: %w", errNotSent, err)})
	}
	for k, vs := range req.Header {
		hr.Header[k] = append([]string(nil), vs...)
	}
	if body != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	if req.IdempotencyKey != "" {
		hr.Header.Set("Idempotency-Key", req.IdempotencyKey)
	}
	if req.Accept != "" {
		hr.Header.Set("Accept", req.Accept)
	}
	if c.UserAgent != "" {
		hr.Header.Set("User-Agent", c.UserAgent)
	}
	if c.Authorize != nil {
		c.Authorize(hr.Header)
	}
	hc := c.HTTP
	if hc == nil {
		hc = defaultHTTP
	}
	resp, err := hc.Do(hr)
	if err != nil {
		return fail(&Error{Err: err})
	}
	defer resp.Body.Close()
	a.Status = resp.StatusCode
	e := &Error{Status: resp.StatusCode, RequestID: resp.Header.Get("X-Request-Id"),
		RetryAfter: parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())}
	if req.Stream != nil && resp.StatusCode == http.StatusOK && !isJSON(resp.Header.Get("Content-Type")) {
		a.Envelope, a.Code = false, CodeOK
		if err := req.Stream(resp); err != nil {
			e.Err = err
			if !errors.Is(err, ErrStreamStarted) {
				// Nothing was delivered yet: as good as no answer.
				e.Status, a.Status = 0, 0
			}
			return fail(e)
		}
		return a
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, answerBytesMax+1))
	if err != nil {
		// The answer was cut: what happened is unknown, as with no answer.
		e.Status, a.Status = 0, 0
		e.Err = fmt.Errorf("reading the answer: %w", err)
		return fail(e)
	}
	if len(raw) > answerBytesMax {
		e.Err = fmt.Errorf("the answer is larger than %d bytes", answerBytesMax)
		return fail(e)
	}
	var env struct {
		Code    *int            `json:"code"`
		Message *string         `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(raw, &env); err != nil || env.Code == nil || env.Message == nil {
		e.Err = fmt.Errorf("the answer is not an envelope: %.200q", raw)
		return fail(e)
	}
	a.Envelope, a.Code = true, Code(*env.Code)
	e.Code, e.Message = Code(*env.Code), *env.Message
	if resp.StatusCode != http.StatusOK || e.Code != CodeOK {
		e.Field = fieldOf(resp.StatusCode, e.Message)
		return fail(e)
	}
	if out != nil && len(env.Data) > 0 {
		if err := json.Unmarshal(env.Data, out); err != nil {
			e.Err = fmt.Errorf("decoding data: %w", err)
			e.Code = 0
			return fail(e)
		}
	}
	return a
}

// ErrStreamStarted marks a Stream failure after part of the body was
// delivered: the call cannot be repeated into the same destination.
var ErrStreamStarted = errors.New("client: the answer was cut after delivery began")

func isJSON(contentType string) bool {
	return strings.HasPrefix(strings.ToLower(strings.TrimSpace(contentType)), "application/json")
}

// defaultHTTP is the client of a Caller without one.
var defaultHTTP = NewHTTPClient(nil, 16)

// Package client is the typed Go client of the gateway's /shop API
// (docs/openapi.yaml, docs/api.md), for merchants to import:
//
//	c, err := client.New(client.Config{BaseURL: "https://127.0.0.1:8443", ShopNo: shopNo, PublicKey: publicKey,
//		HTTPClient: client.NewHTTPClient(pool, 16)})
//	card, err := c.CreateCard(ctx, client.CreateCardRequest{BIN: "453201", Currency: "USD",
//		Amount: client.MustDecimal("50.00")})
//	var e *client.Error
//	if errors.As(err, &e) && e.Business() { … e.Code, e.Message … }
//	if errors.Is(err, client.CodeInsufficientFunds) { … }
//
// What it does for the caller:
//
//   - One method per operation of the spec, with its request and answer as
//     Go types. Money is Decimal, the exact text of the JSON number, never
//     a float64.
//   - Every failure is an *Error: HTTP status, envelope code (typed Code,
//     matchable with errors.Is), the field a 400 names, the message, the
//     request id, Retry-After, and the Idempotency-Key the request carried.
//   - Every POST carries an Idempotency-Key: the caller's
//     (WithIdempotencyKey) or a new random one, which a failed call's
//     *Error reports so that the caller can send the same request again
//     later and learn its outcome without a second effect.
//   - Safe retries (RetryPolicy): after no answer, HTTP 429 or 503, a GET,
//     or a POST with its key, is sent again with the same key, at most
//     MaxAttempts times, after a jittered exponential wait that is at least
//     the answer's Retry-After, and never past the context. A 4xx other
//     than 429, and a business failure (HTTP 200, code ≠ 200), are final.
//   - Callbacks: CallbackHandler and VerifyCallback are the reference
//     receiver's (api/receiver), DecodeEventData types an event's data.
//
// The types are held equal to docs/openapi.yaml by contract_test.go: a
// field added to or removed from either side fails it.
package client

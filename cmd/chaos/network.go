package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/postings"
)

// netAnswer is the final answer to a network message, in minor units of the
// card's currency.
type netAnswer struct {
	code               int // envelope code: 200, 1202 (closed), 400, …
	authID             string
	approved           bool
	respCode           string
	status             string
	captured, released int64
	held               int64
}

func (a netAnswer) text() string {
	return fmt.Sprintf("%d/%s/%v/%s/%s/c%d/r%d/h%d", a.code, a.authID, a.approved, a.respCode, a.status, a.captured, a.released, a.held)
}

// errUnanswered is a message that got no final answer (no connection, 5xx,
// 1009): the sender retries it with the same message id.
var errUnanswered = errors.New("unanswered")

// netDriver sends network messages to one of the gateways.
type netDriver interface {
	name() string
	authorize(ctx context.Context, target int, req network.AuthRequest) (netAnswer, error)
	clear(ctx context.Context, target int, req network.ClearRequest) (netAnswer, error)
	reverse(ctx context.Context, target int, req network.ReverseRequest) (netAnswer, error)
}

// httpNetDriver calls the internal network API of the gateways
// (POST /network/authorize|clear|reverse, bearer token).
type httpNetDriver struct {
	targets []string
	token   string
	client  *http.Client
}

func (d *httpNetDriver) name() string { return "the internal network API (POST /network/*)" }

func (d *httpNetDriver) post(ctx context.Context, target int, path string, body map[string]any) (envelope, error) {
	var env envelope
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.targets[target]+path, bytes.NewReader(b))
	if err != nil {
		return env, err
	}
	req.Header.Set("Authorization", "Bearer "+d.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := d.client.Do(req)
	if err != nil {
		return env, errUnanswered
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if err != nil || resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests {
		return env, errUnanswered
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return env, fmt.Errorf("HTTP %d, not an envelope: %.200s", resp.StatusCode, raw)
	}
	if env.Code == 1009 {
		return env, errUnanswered
	}
	if resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusUnauthorized {
		return env, fmt.Errorf("HTTP %d: %s", resp.StatusCode, env.Message)
	}
	return env, nil
}

func minorOf(raw json.RawMessage, cur string) int64 {
	if len(raw) == 0 || string(raw) == "null" {
		return 0
	}
	s := string(bytes.Trim(raw, `"`))
	n, err := postings.ParseSignedAmount(s, postings.MustCurrency(cur))
	if err != nil {
		return -1
	}
	return n
}

func (d *httpNetDriver) authorize(ctx context.Context, target int, req network.AuthRequest) (netAnswer, error) {
	cur := postings.MustCurrency(req.Currency)
	env, err := d.post(ctx, target, "/network/authorize", map[string]any{"messageId": req.MessageID, "cardNo": req.CardNo,
		"amount": postings.FormatMinor(req.Amount, cur), "currency": req.Currency, "merchantName": req.MerchantName,
		"mcc": req.MCC, "merchantCountry": req.MerchantCountry})
	if err != nil {
		return netAnswer{}, err
	}
	a := netAnswer{code: env.Code}
	if env.Code == 200 {
		var v struct {
			AuthID   *string `json:"authId"`
			Approved bool    `json:"approved"`
			Code     string  `json:"code"`
		}
		_ = json.Unmarshal(env.Data, &v)
		a.approved, a.respCode = v.Approved, v.Code
		if v.AuthID != nil {
			a.authID = *v.AuthID
		}
	}
	return a, nil
}

func (d *httpNetDriver) hold(ctx context.Context, target int, path string, body map[string]any, cur string) (netAnswer, error) {
	env, err := d.post(ctx, target, path, body)
	if err != nil {
		return netAnswer{}, err
	}
	a := netAnswer{code: env.Code}
	if env.Code == 200 {
		var v struct {
			AuthID   string          `json:"authId"`
			Status   string          `json:"status"`
			Captured json.RawMessage `json:"captured"`
			Released json.RawMessage `json:"released"`
			Held     json.RawMessage `json:"held"`
		}
		_ = json.Unmarshal(env.Data, &v)
		a.authID, a.status = v.AuthID, v.Status
		a.captured, a.released, a.held = minorOf(v.Captured, cur), minorOf(v.Released, cur), minorOf(v.Held, cur)
	}
	return a, nil
}

func (d *httpNetDriver) clear(ctx context.Context, target int, req network.ClearRequest) (netAnswer, error) {
	return d.hold(ctx, target, "/network/clear", map[string]any{"messageId": req.MessageID, "authId": req.AuthID,
		"amount": postings.FormatMinor(req.Amount, postings.MustCurrency("USD"))}, "USD")
}

func (d *httpNetDriver) reverse(ctx context.Context, target int, req network.ReverseRequest) (netAnswer, error) {
	body := map[string]any{"messageId": req.MessageID, "authId": req.AuthID}
	if req.Amount > 0 {
		body["amount"] = postings.FormatMinor(req.Amount, postings.MustCurrency("USD"))
	}
	return d.hold(ctx, target, "/network/reverse", body, "USD")
}

// ledgerNetDriver drives the ledger directly from several ledger.Ledger
// instances on the same database: the same lock protocol as several
// gateway processes, for a build without the internal network API.
type ledgerNetDriver struct{ ls []*services }

func (d *ledgerNetDriver) name() string {
	return fmt.Sprintf("%d ledger.Ledger instances in the chaos process (no internal network API)", len(d.ls))
}

func ledgerAnswer(err error) (netAnswer, error) {
	pe := postings.AsError(err)
	switch {
	case pe.Code == postings.EUNAVAILABLE || pe.Code == postings.EINPROGRESS || pe.Reason == postings.ReasonIdempotencyRace:
		return netAnswer{}, errUnanswered
	case pe.Reason == postings.ReasonAuthorizationClosed:
		return netAnswer{code: 1202}, nil
	case pe.Code == postings.EINVALID:
		return netAnswer{code: 400}, nil
	}
	return netAnswer{code: 999}, nil
}

func (d *ledgerNetDriver) authorize(ctx context.Context, target int, req network.AuthRequest) (netAnswer, error) {
	r, err := d.ls[target%len(d.ls)].network.Authorize(ctx, req)
	if err != nil {
		return ledgerAnswer(err)
	}
	return netAnswer{code: 200, authID: r.AuthID, approved: r.Approved, respCode: r.Code}, nil
}

func holdAnswer(r *network.HoldResult, err error) (netAnswer, error) {
	if err != nil {
		return ledgerAnswer(err)
	}
	return netAnswer{code: 200, authID: r.AuthID, status: r.Status, captured: r.Captured, released: r.Released, held: r.Held}, nil
}

func (d *ledgerNetDriver) clear(ctx context.Context, target int, req network.ClearRequest) (netAnswer, error) {
	return holdAnswer(d.ls[target%len(d.ls)].network.Clear(ctx, req))
}

func (d *ledgerNetDriver) reverse(ctx context.Context, target int, req network.ReverseRequest) (netAnswer, error) {
	return holdAnswer(d.ls[target%len(d.ls)].network.Reverse(ctx, req))
}

// sendUntilAnswered retries one message (same message id) until it has a
// final answer.
func sendUntilAnswered(ctx context.Context, send func() (netAnswer, error)) (netAnswer, int, error) {
	deadline := time.Now().Add(2 * time.Minute)
	for n := 1; ; n++ {
		a, err := send()
		if err == nil {
			return a, n, nil
		}
		if !errors.Is(err, errUnanswered) {
			return a, n, err
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			return a, n, fmt.Errorf("no answer after %d attempts", n)
		}
		time.Sleep(time.Duration(20*min(n, 10)) * time.Millisecond)
	}
}

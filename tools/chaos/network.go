package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/paygate/gateway/api/client"
	"github.com/paygate/gateway/internal/netclient"
	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/postings"
	"github.com/paygate/gateway/tools/internal/harness"
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

// httpNetDriver calls the internal network API of the gateways through
// internal/netclient (POST /network/authorize|clear|reverse, bearer
// token), which retries each message with its id until it is answered.
type httpNetDriver struct {
	targets []*netclient.Client
}

func newHTTPNetDriver(gws []*harness.Gateway) (*httpNetDriver, error) {
	d := &httpNetDriver{}
	for _, g := range gws {
		nc, err := g.NetClient(client.RetryPolicy{MaxAttempts: 1 << 20, MaxElapsed: 2 * time.Minute, BaseDelay: 20 * time.Millisecond,
			MaxDelay: 200 * time.Millisecond, RetryInProgress: true})
		if err != nil {
			return nil, err
		}
		d.targets = append(d.targets, nc)
	}
	return d, nil
}

func (d *httpNetDriver) name() string { return "the internal network API (POST /network/*)" }

// available: does the first gateway serve the internal API? An
// authorization without a card is refused (400, recording nothing) by one
// that does, 404 by one that does not.
func (d *httpNetDriver) available(ctx context.Context) bool {
	_, err := d.targets[0].Authorize(ctx, netclient.AuthorizeRequest{MessageID: "chaos-probe", Amount: client.MustDecimal("0")},
		netclient.WithRetry(client.RetryPolicy{MaxAttempts: 3}))
	var e *client.Error
	return errors.As(err, &e) && e.Status != 0 && e.Status != http.StatusNotFound
}

// answerOf turns a failure into the answer the checks compare: a business
// failure or a 400 is an answer (code 1202, 400, …); a 500 is sent again
// (errUnanswered); anything else is an error.
func answerOf(err error) (netAnswer, error) {
	var e *client.Error
	switch {
	case !errors.As(err, &e):
		return netAnswer{}, err
	case e.Status == http.StatusInternalServerError:
		return netAnswer{}, errUnanswered
	case e.Temporary():
		return netAnswer{}, fmt.Errorf("no answer after %d attempts: %w", e.Attempts, err)
	case e.Status == http.StatusNotFound || e.Status == http.StatusUnauthorized || e.Code == 0:
		return netAnswer{}, fmt.Errorf("HTTP %d: %s", e.Status, e.Message)
	}
	return netAnswer{code: int(e.Code)}, nil
}

func minorOf(d *client.Decimal, cur string) int64 {
	if d == nil || !d.IsSet() {
		return 0
	}
	n, err := postings.ParseSignedAmount(d.String(), postings.MustCurrency(cur))
	if err != nil {
		return -1
	}
	return n
}

func (d *httpNetDriver) authorize(ctx context.Context, target int, req network.AuthRequest) (netAnswer, error) {
	cur := postings.MustCurrency(req.Currency)
	v, err := d.targets[target].Authorize(ctx, netclient.AuthorizeRequest{MessageID: req.MessageID, CardNo: req.CardNo,
		Amount: client.MustDecimal(postings.FormatMinor(req.Amount, cur)), Currency: req.Currency, MerchantName: req.MerchantName,
		MCC: req.MCC, MerchantCountry: req.MerchantCountry})
	if err != nil {
		return answerOf(err)
	}
	a := netAnswer{code: 200, approved: v.Approved, respCode: v.Code}
	if v.AuthID != nil {
		a.authID = *v.AuthID
	}
	return a, nil
}

func holdOf(v *netclient.HoldResult, err error) (netAnswer, error) {
	if err != nil {
		return answerOf(err)
	}
	return netAnswer{code: 200, authID: v.AuthID, status: v.Status, captured: minorOf(&v.Captured, v.Currency),
		released: minorOf(&v.Released, v.Currency), held: minorOf(&v.Held, v.Currency)}, nil
}

func (d *httpNetDriver) clear(ctx context.Context, target int, req network.ClearRequest) (netAnswer, error) {
	return holdOf(d.targets[target].Clear(ctx, netclient.ClearRequest{MessageID: req.MessageID, AuthID: req.AuthID,
		Amount: client.MustDecimal(postings.FormatMinor(req.Amount, postings.MustCurrency("USD")))}))
}

func (d *httpNetDriver) reverse(ctx context.Context, target int, req network.ReverseRequest) (netAnswer, error) {
	r := netclient.ReverseRequest{MessageID: req.MessageID, AuthID: req.AuthID}
	if req.Amount > 0 {
		a := client.MustDecimal(postings.FormatMinor(req.Amount, postings.MustCurrency("USD")))
		r.Amount = &a
	}
	return holdOf(d.targets[target].Reverse(ctx, r))
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

package partner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/paygate/gateway/api"
	"github.com/paygate/gateway/internal/database"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/internal/remittance"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// The sandbox (docs/api.md, "The sandbox"): a test merchant plays the card
// network and the rail partner for its own cards and remittances. It is a
// second front end of the internal API's commands, not a copy: the same
// decoders (without messageId), the same Network and Rails calls, the same
// answers. So every bound, decline, posting, bill line and callback is the
// one live traffic gets. What the sandbox adds is only who may ask: the
// card, authorization or remittance must be the caller's own, and another
// merchant's looks exactly like one that does not exist.

type sandbox struct {
	cards   CardReader
	network Network
	rails   Rails
	remit   RemittanceReader
	keys    api.ReadKeys
}

// SandboxDeps are what the sandbox's handlers call.
type SandboxDeps struct {
	Cards       CardReader
	Network     Network
	Rails       Rails
	Remittances RemittanceReader
	ReadKeys    api.ReadKeys
	// Clock is the test clocks (sandbox_clock.go); nil: no clock routes.
	Clock Clock
}

// NewSandbox returns the handlers of /shop/sandbox for api.Deps.Sandbox;
// api's routes put them behind /shop's authentication, rate limit and
// Idempotency-Key, and hide them from every merchant but a test one.
// Without the network or the rails there is no sandbox: nil.
func NewSandbox(d SandboxDeps) *api.SandboxHandlers {
	if d.Network == nil || d.Rails == nil {
		return nil
	}
	s := sandbox{cards: d.Cards, network: d.Network, rails: d.Rails, remit: d.Remittances, keys: d.ReadKeys}
	h := &api.SandboxHandlers{
		Authorize: s.authorize(),
		Capture:   s.hold(true, s.capture),
		Reverse:   s.hold(false, s.reverse),
		Refund:    s.refund(),
		Settle:    s.report(false),
		Return:    s.report(true),
	}
	if d.Clock != nil {
		h.Clock, h.ClockAdvance = clockGet(d.Clock), clockAdvance(d.Clock)
	}
	return h
}

// SandboxMessageID is the network or rail message id of a sandbox request.
// With an Idempotency-Key it is derived from the merchant and the key, so
// that a repeat is the same message, which the network's idempotency
// answers again, and two merchants' keys never meet in the one space of
// message ids (the attempts log holds them for ever). Without a key every
// request is a new message.
func SandboxMessageID(m *merchant.Merchant, idem *ledger.Idempotency) string {
	if idem == nil {
		return "sbx-" + database.RandomID(40)
	}
	sum := sha256.Sum256([]byte(strconv.FormatInt(m.ID, 10) + "\x00" + idem.Key))
	return "sbx-" + hex.EncodeToString(sum[:24])
}

// begin holds the request's Idempotency-Key like every /shop POST (a key is
// one request's, whatever endpoint used it first: ECONFLICT otherwise) and
// returns the message id. The answer itself is kept by the command's own
// idempotency, under the message id.
func (s sandbox) begin(c *gin.Context, m *merchant.Merchant) (string, error) {
	idem := api.IdempotencyOf(c)
	if idem != nil {
		if err := s.keys.ClaimReadIdempotency(c.Request.Context(), m.ID, idem); err != nil {
			return "", err
		}
	}
	return SandboxMessageID(m, idem), nil
}

// ownCard refuses a card that is not the merchant's as the card endpoints
// do: unknown and another merchant's are the same ENOTFOUND.
func (s sandbox) ownCard(c *gin.Context, m *merchant.Merchant, cardNo string) error {
	_, err := s.cards.Card(c.Request.Context(), m.ID, cardNo)
	return err
}

// errUnknownAuthorization is the answer for an authorization the merchant
// does not have, whether it exists for another merchant or not at all.
func errUnknownAuthorization() error {
	return postings.ReasonErrorf(postings.ENOTFOUND, postings.ReasonAuthorization, "authorization not found")
}

// ownAuthorization reads an authorization of the merchant's.
func (s sandbox) ownAuthorization(c *gin.Context, m *merchant.Merchant, authID string) (*network.Authorization, error) {
	a, err := s.network.Authorization(c.Request.Context(), authID)
	switch {
	case postings.ErrorCode(err) == postings.ENOTFOUND:
		return nil, errUnknownAuthorization()
	case err != nil:
		return nil, err
	case a.MerchantID != m.ID:
		return nil, errUnknownAuthorization()
	}
	return a, nil
}

// authorize answers POST /shop/sandbox/authorize: /network/authorize on
// the merchant's own card.
func (s sandbox) authorize() gin.HandlerFunc {
	return onOwnCard(s, decodeAuthorizeBody, func(r *network.AuthRequest) (string, *string) { return r.CardNo, &r.MessageID },
		s.network.Authorize, newAuthorizeView)
}

// refund answers POST /shop/sandbox/refund: /network/refund on the
// merchant's own card.
func (s sandbox) refund() gin.HandlerFunc {
	return onOwnCard(s, decodeRefundBody, func(r *network.RefundRequest) (string, *string) { return r.CardNo, &r.MessageID },
		s.network.Refund, newRefundView)
}

// onOwnCard answers a network message about a card (an authorization, a
// refund) sent for the merchant's own card: decoded as the internal API
// decodes it but without its messageId, refused as unknown for a card that
// is not the merchant's, given the message id of its key (card names the
// request's card and where its id goes), then run and answered as the
// internal API answers it.
func onOwnCard[Req, Res, View any](s sandbox, decode func(raw []byte, sandbox bool) (Req, error),
	card func(*Req) (cardNo string, messageID *string), run func(context.Context, Req) (Res, error), view func(Res) View) gin.HandlerFunc {
	return answer(func(c *gin.Context) (any, error) {
		req, err := decode(api.Body(c), true)
		if err != nil {
			return nil, err
		}
		m := api.MerchantOf(c)
		cardNo, id := card(&req)
		if err := s.ownCard(c, m, cardNo); err != nil {
			return nil, err
		}
		return keyed(s, c, m, func(messageID string) (View, error) {
			*id = messageID
			res, err := run(c.Request.Context(), req)
			return viewOf(res, err, view)
		})
	})
}

// holdCommand is a clearing or a reversal of an authorization: amount is
// in its transaction currency, 0 with has false for "all of it".
type holdCommand func(c *gin.Context, messageID, authID string, amount int64, has bool) (*network.HoldResult, error)

func (s sandbox) capture(c *gin.Context, messageID, authID string, amount int64, _ bool) (*network.HoldResult, error) {
	return s.network.Clear(c.Request.Context(), network.ClearRequest{MessageID: messageID, AuthID: authID, Amount: amount})
}

func (s sandbox) reverse(c *gin.Context, messageID, authID string, amount int64, has bool) (*network.HoldResult, error) {
	req := network.ReverseRequest{MessageID: messageID, AuthID: authID}
	if has {
		req.Amount = amount
	}
	return s.network.Reverse(c.Request.Context(), req)
}

// hold answers POST /shop/sandbox/capture (/network/clear, amount
// required) and POST /shop/sandbox/reverse (/network/reverse, amount
// optional) on the merchant's own authorization.
func (s sandbox) hold(amountRequired bool, run holdCommand) gin.HandlerFunc {
	return answer(func(c *gin.Context) (any, error) {
		msg, err := decodeHoldBody(api.Body(c), amountRequired, true)
		if err != nil {
			return nil, err
		}
		m := api.MerchantOf(c)
		a, err := s.ownAuthorization(c, m, msg.AuthID)
		if err != nil {
			return nil, err
		}
		var amount int64
		if msg.hasAmount {
			if amount, err = msg.amountOf(a); err != nil {
				return nil, err
			}
		}
		return keyed(s, c, m, func(id string) (holdView, error) {
			res, err := run(c, id, msg.AuthID, amount, msg.hasAmount)
			return viewOf(res, err, newHoldView)
		})
	})
}

// report answers POST /shop/sandbox/remittance/settle ({txId}) and
// /remittance/return ({txId, reason}): /rail/report on the merchant's own
// remittance.
func (s sandbox) report(returned bool) gin.HandlerFunc {
	return answer(func(c *gin.Context) (any, error) {
		r := railReport{Status: remittance.RemitSettled}
		fields := []api.Field{api.NewField("txId", true, &r.TxID)}
		if returned {
			r.Status = remittance.RemitReturned
			fields = append(fields, api.NewField("reason", true, &r.Reason))
		}
		if err := api.DecodeObject(api.Body(c), fields); err != nil {
			return nil, err
		}
		if err := r.check(); err != nil {
			return nil, err
		}
		m := api.MerchantOf(c)
		if _, err := s.remit.Remittance(c.Request.Context(), m.ID, r.TxID); err != nil {
			return nil, err
		}
		return keyed(s, c, m, func(id string) (railReportView, error) {
			res, err := s.rails.ReportRemittance(c.Request.Context(), id, r.TxID, r.Status, r.Reason)
			return viewOf(res, err, newRailReportView)
		})
	})
}

// answer runs a sandbox handler's steps and answers what they return: the
// view, or the first error in the envelope.
func answer(steps func(c *gin.Context) (any, error)) gin.HandlerFunc {
	return func(c *gin.Context) {
		view, err := steps(c)
		if err != nil {
			api.WriteError(c, err)
			return
		}
		api.WriteOK(c, view)
	}
}

// keyed holds the request's Idempotency-Key (begin) and runs the command
// with the message id it gives.
func keyed[V any](s sandbox, c *gin.Context, m *merchant.Merchant, run func(messageID string) (V, error)) (any, error) {
	id, err := s.begin(c, m)
	if err != nil {
		return nil, err
	}
	v, err := run(id)
	if err != nil {
		return nil, err
	}
	return v, nil
}

// viewOf is a command's answer as the internal API renders it.
func viewOf[R, V any](res R, err error, view func(R) V) (V, error) {
	if err != nil {
		var zero V
		return zero, err
	}
	return view(res), nil
}

package api

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"

	"github.com/gin-gonic/gin"

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
	cards   Cards
	network Network
	rails   Rails
	remit   Remittances
	keys    ReadKeys
}

// sandboxMessageID is the network or rail message id of a sandbox request.
// With an Idempotency-Key it is derived from the merchant and the key, so
// that a repeat is the same message, which the network's idempotency
// answers again, and two merchants' keys never meet in the one space of
// message ids (the attempts log holds them for ever). Without a key every
// request is a new message.
func sandboxMessageID(m *merchant.Merchant, idem *ledger.Idempotency) string {
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
	idem := idempotencyOf(c)
	if idem != nil {
		if err := s.keys.ClaimReadIdempotency(c.Request.Context(), m.ID, idem); err != nil {
			return "", err
		}
	}
	return sandboxMessageID(m, idem), nil
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
	return func(c *gin.Context) {
		req, err := decodeAuthorizeBody(bodyOf(c), true)
		if err != nil {
			writeError(c, err)
			return
		}
		m := merchantOf(c)
		if err := s.ownCard(c, m, req.CardNo); err != nil {
			writeError(c, err)
			return
		}
		if req.MessageID, err = s.begin(c, m); err != nil {
			writeError(c, err)
			return
		}
		res, err := s.network.Authorize(c.Request.Context(), req)
		if err != nil {
			writeError(c, err)
			return
		}
		writeOK(c, newAuthorizeView(res))
	}
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
	return func(c *gin.Context) {
		msg, err := decodeHoldBody(bodyOf(c), amountRequired, true)
		if err != nil {
			writeError(c, err)
			return
		}
		m := merchantOf(c)
		a, err := s.ownAuthorization(c, m, msg.AuthID)
		if err != nil {
			writeError(c, err)
			return
		}
		var amount int64
		if msg.hasAmount {
			if amount, err = msg.amountOf(a); err != nil {
				writeError(c, err)
				return
			}
		}
		id, err := s.begin(c, m)
		if err != nil {
			writeError(c, err)
			return
		}
		res, err := run(c, id, msg.AuthID, amount, msg.hasAmount)
		if err != nil {
			writeError(c, err)
			return
		}
		writeOK(c, newHoldView(res))
	}
}

// refund answers POST /shop/sandbox/refund: /network/refund on the
// merchant's own card.
func (s sandbox) refund() gin.HandlerFunc {
	return func(c *gin.Context) {
		req, err := decodeRefundBody(bodyOf(c), true)
		if err != nil {
			writeError(c, err)
			return
		}
		m := merchantOf(c)
		if err := s.ownCard(c, m, req.CardNo); err != nil {
			writeError(c, err)
			return
		}
		if req.MessageID, err = s.begin(c, m); err != nil {
			writeError(c, err)
			return
		}
		res, err := s.network.Refund(c.Request.Context(), req)
		if err != nil {
			writeError(c, err)
			return
		}
		writeOK(c, newRefundView(res))
	}
}

// report answers POST /shop/sandbox/remittance/settle ({txId}) and
// /remittance/return ({txId, reason}): /rail/report on the merchant's own
// remittance.
func (s sandbox) report(returned bool) gin.HandlerFunc {
	return func(c *gin.Context) {
		r := railReport{Status: remittance.RemitSettled}
		fields := []field{{name: "txId", required: true, into: &r.TxID}}
		if returned {
			r.Status = remittance.RemitReturned
			fields = append(fields, field{name: "reason", required: true, into: &r.Reason})
		}
		if err := decodeObject(bodyOf(c), fields); err != nil {
			writeError(c, err)
			return
		}
		if err := r.check(); err != nil {
			writeError(c, err)
			return
		}
		m := merchantOf(c)
		if _, err := s.remit.Remittance(c.Request.Context(), m.ID, r.TxID); err != nil {
			writeError(c, err)
			return
		}
		id, err := s.begin(c, m)
		if err != nil {
			writeError(c, err)
			return
		}
		res, err := s.rails.ReportRemittance(c.Request.Context(), id, r.TxID, r.Status, r.Reason)
		if err != nil {
			writeError(c, err)
			return
		}
		writeOK(c, newRailReportView(res))
	}
}

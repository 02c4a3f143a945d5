package api

import (
	"context"

	"github.com/gin-gonic/gin"

	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// cardRequest is the body of freeze, unfreeze and cancel: a card number and,
// for freeze only, an optional reason.
type cardRequest struct {
	CardNo string
	Reason string
}

func decodeCardRequest(raw []byte, withReason bool) (cardRequest, error) {
	var req cardRequest
	fields := []field{{name: "cardNo", required: true, into: &req.CardNo}}
	if withReason {
		fields = append(fields, field{name: "reason", into: &req.Reason})
	}
	if err := decodeObject(raw, fields); err != nil {
		return cardRequest{}, err
	}
	if err := checkCardNo("cardNo", req.CardNo); err != nil {
		return cardRequest{}, err
	}
	if err := postings.CheckText("reason", req.Reason, reasonCharsMax); err != nil {
		return cardRequest{}, err
	}
	return req, nil
}

// cardAction is what freeze, unfreeze and cancel do with their request.
type cardAction func(ctx context.Context, merchant int64, req cardRequest, idem *ledger.Idempotency) error

// handleCardAction answers POST /shop/card/freeze, unfreeze and cancel, all
// with data null (the spec shows null for freeze and cancel). Freezing a
// frozen card, or unfreezing an active one, succeeds and changes nothing. A
// cancellation's refund shows in the card (balance 0, CANCELLED) and in the
// bill (CARD_CANCEL_REFUND). Only freeze takes a reason.
func handleCardAction(withReason bool, act cardAction) gin.HandlerFunc {
	return func(c *gin.Context) {
		req, err := decodeCardRequest(bodyOf(c), withReason)
		if err != nil {
			writeError(c, err)
			return
		}
		if err := act(c.Request.Context(), merchantOf(c).ID, req, idempotencyOf(c)); err != nil {
			writeError(c, err)
			return
		}
		writeOK(c, nil)
	}
}

func freezeCard(l Cards) cardAction {
	return func(ctx context.Context, m int64, req cardRequest, idem *ledger.Idempotency) error {
		_, err := l.FreezeCard(ctx, m, req.CardNo, req.Reason, idem)
		return err
	}
}

func unfreezeCard(l Cards) cardAction {
	return func(ctx context.Context, m int64, req cardRequest, idem *ledger.Idempotency) error {
		_, err := l.UnfreezeCard(ctx, m, req.CardNo, idem)
		return err
	}
}

func cancelCard(l Cards) cardAction {
	return func(ctx context.Context, m int64, req cardRequest, idem *ledger.Idempotency) error {
		_, err := l.CancelCard(ctx, m, req.CardNo, idem)
		return err
	}
}

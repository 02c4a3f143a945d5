package api

import (
	"time"

	"github.com/gin-gonic/gin"

	"github.com/paygate/gateway/api/views"
	"github.com/paygate/gateway/internal/merchant"
)

// Key rolls (docs/api.md, "Keys"; docs/security.md, "Rolling keys"): the
// merchant replaces its public key or its callback signing key; the
// replaced key stays valid for an overlap. The new key is in the answer of
// the roll and nowhere else: a replay of the same Idempotency-Key answers
// the roll with key null.

// handleKeys answers GET /shop/keys.
func handleKeys(l Keys) gin.HandlerFunc {
	return func(c *gin.Context) {
		st, err := l.KeyState(c.Request.Context(), merchantOf(c).ID)
		writeResult(c, views.NewKeys, st, err)
	}
}

// keyOverlapHoursMax is the longest overlap, in the request's unit.
const keyOverlapHoursMax = int(merchant.KeyOverlapMax / time.Hour)

// decodeOverlap reads a roll's body, {"overlapHours": 0 to 168}, default
// 24: the keys' rolls and the webhook secret's.
func decodeOverlap(c *gin.Context) (time.Duration, error) {
	var hours amountText
	if err := decodeObject(bodyOf(c), []field{{name: "overlapHours", into: &hours}}); err != nil {
		return 0, err
	}
	if hours == "" {
		return merchant.KeyOverlapDefault, nil
	}
	n, err := parseIntField("overlapHours", hours, 0, keyOverlapHoursMax)
	return time.Duration(n) * time.Hour, err
}

// handleKeyRoll answers POST /shop/keys/public/roll and
// /shop/keys/signing/roll {"overlapHours": 0 to 168, default 24}.
func handleKeyRoll(l Keys, kind string) gin.HandlerFunc {
	return func(c *gin.Context) {
		overlap, err := decodeOverlap(c)
		if err != nil {
			writeError(c, err)
			return
		}
		m := merchantOf(c)
		var r *merchant.KeyRoll
		if kind == merchant.KeySigning {
			r, err = l.RollSigningKey(c.Request.Context(), m.ID, overlap, idempotencyOf(c))
		} else {
			// The key that authenticated this request is the one the
			// merchant holds: it stays valid beside the new one.
			r, err = l.RollPublicKey(c.Request.Context(), m.ID, overlap, m.ByPreviousKey, idempotencyOf(c))
		}
		if err != nil {
			writeError(c, err)
			return
		}
		// The answer holds a secret: no cache keeps it.
		c.Header("Cache-Control", "no-store")
		writeOK(c, views.NewKeyRoll(r))
	}
}

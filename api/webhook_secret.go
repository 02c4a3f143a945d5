package api

import (
	"github.com/gin-gonic/gin"
	"github.com/paygate/gateway/api/views"
)

// The merchant's Standard Webhooks secret (docs/callbacks.md, "Standard
// Webhooks"): POST /shop/webhook/secret/roll makes a new one and shows it in
// the answer, nowhere else; the replaced one keeps signing for the overlap.
// No replay of the answer is stored (it holds the secret): a retried roll
// rolls again, which the roll's rules make harmless — during an overlap a
// second roll keeps the OLDER secret, the one the merchant surely holds,
// and the answer shows the newest.

// handleWebhookSecretRoll answers POST /shop/webhook/secret/roll
// {"overlapHours": 0 to 168, default 24}.
func handleWebhookSecretRoll(l Webhooks, keys ReadKeys) gin.HandlerFunc {
	return func(c *gin.Context) {
		overlap, err := decodeOverlap(c)
		if err != nil {
			writeError(c, err)
			return
		}
		ctx := c.Request.Context()
		m := merchantOf(c)
		// A key reused with another request is 1008, as for the other
		// settings; the same request again rolls again (above).
		if err := keys.ClaimReadIdempotency(ctx, m.ID, idempotencyOf(c)); err != nil {
			writeError(c, err)
			return
		}
		r, err := l.RollWebhookSecret(ctx, m.ID, overlap)
		if err != nil {
			writeError(c, err)
			return
		}
		c.Header("Cache-Control", "no-store") // the answer holds a secret
		writeOK(c, views.NewWebhookSecret(r))
	}
}

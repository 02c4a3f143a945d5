package partner

import (
	"context"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/paygate/gateway/api"
	"github.com/paygate/gateway/internal/testclock"
	"github.com/paygate/gateway/ledger"
)

// The test clock of a test merchant (docs/api.md, "The test clock"):
// GET /shop/sandbox/clock reads it, POST /shop/sandbox/clock/advance
// {"duration":"7d"} moves it ahead, so that the merchant's holds expire,
// its remittances move and its callbacks retry as if that time had passed.

// Clock is a test merchant's clock (*testclock.Service).
type Clock interface {
	Clock(ctx context.Context, merchant int64) (*testclock.Clock, error)
	Advance(ctx context.Context, merchant int64, d time.Duration, idem *ledger.Idempotency) (*testclock.Clock, error)
}

var _ Clock = (*testclock.Service)(nil)

// clockView is the clock as the API answers it: the merchant's time and
// how far ahead of real time it is.
type clockView struct {
	Now           string `json:"now"`
	OffsetSeconds int64  `json:"offsetSeconds"`
}

func newClockView(c *testclock.Clock) clockView {
	return clockView{Now: c.Now.UTC().Format(time.RFC3339), OffsetSeconds: int64(c.Offset / time.Second)}
}

// clockGet answers GET /shop/sandbox/clock.
func clockGet(clock Clock) gin.HandlerFunc {
	return answer(func(c *gin.Context) (any, error) {
		res, err := clock.Clock(c.Request.Context(), api.MerchantOf(c).ID)
		return viewOf(res, err, newClockView)
	})
}

// clockAdvance answers POST /shop/sandbox/clock/advance. Its
// Idempotency-Key is the journal command's own, as for every /shop command:
// a repeat advances once and answers the first clock.
func clockAdvance(clock Clock) gin.HandlerFunc {
	return answer(func(c *gin.Context) (any, error) {
		var text string
		if err := api.DecodeObject(api.Body(c), []api.Field{api.NewField("duration", true, &text)}); err != nil {
			return nil, err
		}
		d, err := testclock.ParseAdvance("duration", text)
		if err != nil {
			return nil, err
		}
		res, err := clock.Advance(c.Request.Context(), api.MerchantOf(c).ID, d, api.IdempotencyOf(c))
		return viewOf(res, err, newClockView)
	})
}

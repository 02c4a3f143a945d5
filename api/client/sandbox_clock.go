package client

import (
	"context"
	"net/http"
	"time"
)

// The test clock (docs/api.md, "The test clock"): a test merchant moves its
// own time ahead so that its holds expire, its remittances move and its
// callbacks retry on demand. To a live merchant these paths are unknown:
// an *Error of HTTP status 404.

var (
	opSandboxClock        = operation{"sandboxClock", http.MethodGet, "/shop/sandbox/clock"}
	opSandboxAdvanceClock = operation{"sandboxAdvanceClock", http.MethodPost, "/shop/sandbox/clock/advance"}
)

// SandboxClockAdvanceRequest moves the clock Duration ahead: a whole number
// and a unit, s, m, h or d (24 hours), from "1s" to "30d".
type SandboxClockAdvanceRequest struct {
	Duration string `json:"duration"`
}

// SandboxClock is a test merchant's clock: Now is real time plus
// OffsetSeconds.
type SandboxClock struct {
	Now           time.Time `json:"now"`
	OffsetSeconds int64     `json:"offsetSeconds"`
}

// SandboxClock is GET /shop/sandbox/clock.
func (c *Client) SandboxClock(ctx context.Context, opts ...CallOption) (*SandboxClock, error) {
	var out SandboxClock
	if err := c.call(ctx, opSandboxClock, nil, nil, &out, opts); err != nil {
		return nil, err
	}
	return &out, nil
}

// SandboxAdvanceClock is POST /shop/sandbox/clock/advance; its answer is
// the clock after the advance, with the holds it made due already expired.
func (c *Client) SandboxAdvanceClock(ctx context.Context, req SandboxClockAdvanceRequest, opts ...CallOption) (*SandboxClock, error) {
	var out SandboxClock
	if err := c.call(ctx, opSandboxAdvanceClock, nil, req, &out, opts); err != nil {
		return nil, err
	}
	return &out, nil
}

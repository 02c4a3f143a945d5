package remittance

import (
	"context"
	"time"
)

// Rail is a payment rail as the lifecycle worker sees it: asked about an
// in-flight remittance when it is due, it says SETTLED, RETURNED (with an
// ISO return reason) or "" for still in flight, to be asked again at next.
// A real partner reports through ReportRemittance instead and answers "".
type Rail interface {
	Outcome(ctx context.Context, r DueRemittance) (status, reason string, next time.Time, err error)
}

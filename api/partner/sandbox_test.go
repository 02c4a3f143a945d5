package partner

import (
	"context"
	"testing"

	"github.com/paygate/gateway/internal/remittance"
)

// stubNetwork and stubRails only stand for given services: NewSandbox
// must not call them, and the handlers' behaviour is api's tests'
// (handlers_sandbox_test.go, sandbox_test.go, through the plug).
type stubNetwork struct{ Network }

type stubRails struct{}

func (stubRails) ReportRemittance(context.Context, string, string, string, string) (*remittance.Remittance, error) {
	return nil, nil
}

// Without the network or the rails there is no sandbox (every
// /shop/sandbox path then answers as unknown): NewSandbox says nil rather
// than panic on a nil service's method; with both, every handler is made.
func TestNewSandboxNeedsNetworkAndRails(t *testing.T) {
	t.Parallel()
	var n Network = stubNetwork{}
	for _, tc := range []struct {
		name string
		d    SandboxDeps
		want bool
	}{
		{"neither", SandboxDeps{}, false},
		{"network only", SandboxDeps{Network: n}, false},
		{"rails only", SandboxDeps{Rails: stubRails{}}, false},
		{"both", SandboxDeps{Network: n, Rails: stubRails{}}, true},
	} {
		h := NewSandbox(tc.d)
		if (h != nil) != tc.want {
			t.Errorf("%s: handlers %v, want them %v", tc.name, h != nil, tc.want)
			continue
		}
		if h != nil && (h.Authorize == nil || h.Capture == nil || h.Reverse == nil || h.Refund == nil || h.Settle == nil || h.Return == nil) {
			t.Errorf("%s: a handler is missing: %+v", tc.name, h)
		}
	}
}

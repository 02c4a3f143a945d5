package main

import (
	"context"
	"testing"
	"time"

	"github.com/paygate/gateway/api/client/receiver"
)

// The receiver starts with either kind of key alone, or both (docs/walkthrough.md
// starts it with PAYGATE_PRIVATE_KEY only).
func TestHandlerTakesEitherKind(t *testing.T) {
	onEvent := func(context.Context, receiver.Event) error { return nil }
	for name, c := range map[string]struct{ keys, secrets []string }{
		"private key only": {keys: []string{"sk_test_key"}},
		"secret only":      {secrets: []string{"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}},
		"both":             {keys: []string{"sk_test_key"}, secrets: []string{"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}},
	} {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: %v", name, r)
				}
			}()
			if handler(c.keys, c.secrets, time.Minute, onEvent) == nil {
				t.Errorf("%s: no handler", name)
			}
		}()
	}
}

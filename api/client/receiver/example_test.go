package receiver_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/paygate/gateway/api/client/receiver"
)

// The worked example of docs/callbacks.md: a card.created body, the
// X-Timestamp of the attempt and the shop's private key give X-Sign.
const (
	exampleBody      = `{"event_id":"evt_7w2k9d4m1q8z3x6c5v0b2n7r","event_type":"card.created","created_at":"2025-01-15T09:30:00Z","shopNo":"SH1234567890","sequence":1,"data":{"balance":100.00,"cardNo":"crd_k3v9x2m7q1w8z4c6b0n5","createdAt":"2025-01-15T09:30:00Z","currency":"USD","held":0.00,"last4":"4242","status":"ACTIVE"}}`
	exampleTimestamp = "1736933400" // 2025-01-15T09:30:00Z
	exampleKey       = "sk_example_do_not_use_0123456789abcdefghijklmnop"
)

func ExampleSign() {
	fmt.Println(receiver.Sign([]byte(exampleBody), exampleTimestamp, exampleKey))
	// Output: 092b613a25f6a2c13c6c9fb2d34fe149e73069ada98f2fd09c2d4d4c6e19d9fe
}

func ExampleVerify() {
	body := []byte(exampleBody)
	sign := receiver.Sign(body, exampleTimestamp, exampleKey)
	now := time.Unix(1736933400+42, 0) // the receiver's clock, 42 s later

	fmt.Println(receiver.Verify(body, exampleTimestamp, sign, exampleKey, now, receiver.DefaultTolerance))
	fmt.Println(receiver.Verify(body, exampleTimestamp, strings.ToUpper(sign), exampleKey, now, 0))

	tampered := []byte(strings.Replace(exampleBody, "100.00", "900.00", 1))
	err := receiver.Verify(tampered, exampleTimestamp, sign, exampleKey, now, 0)
	fmt.Println(errors.Is(err, receiver.ErrBadSignature))

	err = receiver.Verify(body, exampleTimestamp, sign, exampleKey, now.Add(time.Hour), 0)
	fmt.Println(errors.Is(err, receiver.ErrStaleTimestamp))
	// Output:
	// <nil>
	// <nil>
	// true
	// true
}

func ExampleHandler() {
	onEvent := func(ctx context.Context, e receiver.Event) error {
		fmt.Printf("%s %s seq=%d shop=%s data=%d bytes\n", e.EventType, e.EventID, e.Sequence, e.ShopNo, len(e.Data))
		return nil // store or queue the event here; an error makes the gateway retry
	}
	h := receiver.Handler(exampleKey, receiver.Options{
		Now: func() time.Time { return time.Unix(1736933400, 0) }, // tests only; the default is time.Now
	}, onEvent)

	deliver := func(sign string) {
		req := httptest.NewRequest(http.MethodPost, "/paygate/callbacks", strings.NewReader(exampleBody))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(receiver.HeaderTimestamp, exampleTimestamp)
		req.Header.Set(receiver.HeaderSign, sign)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		fmt.Print(rec.Code, " ", rec.Body.String())
	}
	sign := receiver.Sign([]byte(exampleBody), exampleTimestamp, exampleKey)
	deliver(sign)                    // first delivery
	deliver(sign)                    // a retry of the same event_id
	deliver(strings.Repeat("0", 64)) // a forged signature
	// Output:
	// card.created evt_7w2k9d4m1q8z3x6c5v0b2n7r seq=1 shop=SH1234567890 data=151 bytes
	// 200 {"code":200,"message":"ok"}
	// 200 {"code":200,"message":"duplicate"}
	// 401 {"code":401,"message":"bad signature"}
}

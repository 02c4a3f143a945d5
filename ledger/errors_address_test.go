package ledger_test

import (
	"context"
	"regexp"
	"strconv"
	"testing"

	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// addressRe matches an account address ("m:17:funding:USD"), which names
// internal ids and must never be in a message.
var addressRe = regexp.MustCompile(`m:\d+:[a-z_]+:`)

// The errors a caller can provoke name no account address: a balance that
// would overflow (what the card reached, message after message),
// and entries touching another merchant's account or crossing currencies.
func TestErrorMessagesNameNoAddress(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := newLedger(t, ledger.Config{})
	m := newMerchant(t, l, "USD")
	other := newMerchant(t, l, "USD")
	world := postings.MerchantAccount(m.ID, postings.AccountWorld, "USD")
	// 9,224 deposits of the largest amount overflow an int64 balance.
	var overflow error
	for i := 0; overflow == nil && i < 200; i++ {
		entries := make([]postings.Entry, ledger.BatchEntriesMax)
		for j := range entries {
			entries[j] = move(m.ID, postings.KindDeposit, world, fund(m.ID, "USD"), postings.AmountMinorMax)
		}
		_, overflow = l.Append(ctx, ledger.Batch{Merchant: m.ID, Entries: entries,
			Idempotency: &ledger.Idempotency{Key: "overflow-" + strconv.Itoa(i)}})
	}
	for _, tt := range []struct {
		name string
		err  error
		code postings.Code
	}{
		{"balance overflow", overflow, postings.ELIMIT},
		{"another merchant's account", appendErr(ctx, l, move(m.ID, postings.KindCardFund, fund(other.ID, "USD"), cardAvail(m.ID, "USD", "crd_x"), 1)), postings.EINVALID},
		{"currencies crossed", appendErr(ctx, l, postings.Entry{Merchant: m.ID, Kind: postings.KindCardFund, Postings: []postings.Posting{
			{Source: fund(m.ID, "USD"), Destination: cardAvail(m.ID, "EUR", "crd_x"), Amount: 1, Currency: "USD"}}}), postings.EINVALID},
	} {
		pe := postings.AsError(tt.err)
		if tt.err == nil || pe.Code != tt.code {
			t.Errorf("%s: got %v, want %s", tt.name, tt.err, tt.code)
			continue
		}
		if addressRe.MatchString(pe.Message) || addressRe.MatchString(tt.err.Error()) {
			t.Errorf("%s: the message names an account address: %q", tt.name, pe.Message)
		}
	}
}

func appendErr(ctx context.Context, l *ledger.Ledger, e postings.Entry) error {
	_, err := l.Append(ctx, ledger.Batch{Merchant: e.Merchant, Entries: []postings.Entry{e}})
	return err
}

package deposit_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/paygate/gateway/internal/deposit"
	"github.com/paygate/gateway/internal/gatewaytest"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/ledger/pgtest"
	"github.com/paygate/gateway/postings"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// A deposit's bank reference: validated at the door naming bankReference,
// unique per merchant and currency (across batches and within one), a
// replay under the same key answers the first deposit, and the reference
// is the entry's txId and its deposit.received event's bankReference.
func TestDepositBankReference(t *testing.T) {
	ctx := context.Background()
	g := gatewaytest.New(t, pgtest.NewDB(t), gatewaytest.Options{})
	l, d := g.Ledger, deposit.New(g.Ledger)
	m := gatewaytest.Merchant(t, g.Merchants, "USD", "EUR")
	other := gatewaytest.Merchant(t, g.Merchants, "USD")

	for _, ref := range []string{"", "has space", "a/b", strings.Repeat("x", deposit.BankReferenceMax+1), "\x00x"} {
		_, err := d.Deposit(ctx, m.ID, "USD", 100, ref, nil)
		if e := postings.AsError(err); e.Code != postings.EINVALID || e.Field != "bankReference" {
			t.Errorf("reference %q: %v, want invalid naming bankReference", ref, err)
		}
	}
	rec, err := d.Deposit(ctx, m.ID, "USD", 100, "BANK-2030-0001", &ledger.Idempotency{Key: "k1"})
	if err != nil || rec.BankReference != "BANK-2030-0001" {
		t.Fatalf("DepositRef: %+v, %v", rec, err)
	}
	// The replay under the same key is the first deposit, not a refusal.
	again, err := d.Deposit(ctx, m.ID, "USD", 100, "BANK-2030-0001", &ledger.Idempotency{Key: "k1"})
	if err != nil || again.Seq != rec.Seq {
		t.Fatalf("replay: %+v, %v; want seq %d", again, err, rec.Seq)
	}
	// Another deposit with the reference: refused, naming the first entry.
	_, err = d.Deposit(ctx, m.ID, "USD", 250, "BANK-2030-0001", nil)
	if e := postings.AsError(err); e.Code != postings.ECONFLICT || e.Field != "bankReference" || !strings.Contains(e.Message, "entry 1") {
		t.Errorf("duplicate: %v, want conflict on bankReference naming entry 1", err)
	}
	// The same reference in another currency, or at another merchant, is another transfer.
	if _, err := d.Deposit(ctx, m.ID, "EUR", 100, "BANK-2030-0001", nil); err != nil {
		t.Errorf("other currency: %v", err)
	}
	if _, err := d.Deposit(ctx, other.ID, "USD", 100, "BANK-2030-0001", nil); err != nil {
		t.Errorf("other merchant: %v", err)
	}

	// Concurrent deposits of one reference (one group-commit batch or
	// several): exactly one is written.
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, conflicts := 0, 0
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := d.Deposit(ctx, m.ID, "USD", 7, "BANK-RACE", nil)
			mu.Lock()
			defer mu.Unlock()
			switch postings.ErrorCode(err) {
			case "":
				ok++
			case postings.ECONFLICT:
				conflicts++
			default:
				t.Errorf("concurrent: %v", err)
			}
		}()
	}
	wg.Wait()
	if ok != 1 || conflicts != 7 {
		t.Errorf("concurrent deposits of one reference: %d written, %d refused; want 1 and 7", ok, conflicts)
	}

	// The deposit's callback carries the reference.
	var payload []byte
	if err := l.DB().NewRaw(`select payload from events where merchant_id = ? and event_type = ? order by event_seq limit 1`,
		m.ID, deposit.EventReceived).Scan(ctx, &payload); err != nil {
		t.Fatal(err)
	}
	var ev struct {
		Data struct {
			BankReference string      `json:"bankReference"`
			Amount        json.Number `json:"amount"`
			Currency      string      `json:"currency"`
		} `json:"data"`
	}
	if err := json.Unmarshal(payload, &ev); err != nil || ev.Data.BankReference != "BANK-2030-0001" || ev.Data.Amount != "1.00" ||
		ev.Data.Currency != "USD" {
		t.Errorf("deposit.received: %s (%v)", payload, err)
	}
	gatewaytest.Verify(t, l)
}

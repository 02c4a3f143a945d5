package fx_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/fx"
	"github.com/paygate/gateway/internal/gatewaytest"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/ledger/pgtest"
	"github.com/paygate/gateway/postings"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// current reads a rate as a command's batch sees it.
func current(t *testing.T, l *ledger.Ledger, s *fx.Service, m int64, base, quote string) (*fx.Rate, error) {
	t.Helper()
	var got *fx.Rate
	_, err := ledger.Do(context.Background(), l, nil, nil, &ledger.Func[struct{}]{Merchant: m,
		Run: func(tx *ledger.Tx, _ *ledger.Merchant) (*struct{}, error) {
			var err error
			got, err = s.Current(tx, base, quote)
			return &struct{}{}, err
		}})
	return got, err
}

// A rate is refused once older than the service's maximum age, and a pair
// without a rate is EFORBIDDEN fx_pair.
func TestCurrentRefusesStaleAndMissingRates(t *testing.T) {
	t.Parallel()
	now := &atomic.Pointer[time.Time]{}
	start := time.Now().UTC()
	now.Store(&start)
	g := gatewaytest.New(t, nil, gatewaytest.Options{Ledger: ledger.Config{Now: func() time.Time { return *now.Load() }},
		FXRateMaxAge: time.Hour})
	m := gatewaytest.Merchant(t, g, "USD")
	if _, err := g.FX.Set(context.Background(), "USD", "EUR", "0.92", 50); err != nil {
		t.Fatal(err)
	}
	r, err := current(t, g.Ledger, g.FX, m.ID, "USD", "EUR")
	if err != nil || r.MidRate != "0.92" || r.SpreadBps != 50 || r.Mid.String() != "0.92" {
		t.Fatalf("fresh rate: %+v, %v", r, err)
	}
	later := start.Add(time.Hour + time.Second)
	now.Store(&later)
	if _, err := current(t, g.Ledger, g.FX, m.ID, "USD", "EUR"); postings.AsError(err).Reason != postings.ReasonFXRateStale {
		t.Fatalf("stale rate: %v", err)
	}
	if _, err := current(t, g.Ledger, g.FX, m.ID, "EUR", "JPY"); postings.AsError(err).Reason != postings.ReasonFXPair ||
		postings.ErrorCode(err) != postings.EFORBIDDEN {
		t.Fatalf("missing pair: %v", err)
	}
}

// The operator's rate is refused when it names one currency twice, an
// unknown currency, or a spread the rate cannot take.
func TestSetRefusesBadRates(t *testing.T) {
	t.Parallel()
	g := gatewaytest.New(t, nil, gatewaytest.Options{})
	for _, tt := range []struct {
		base, quote, mid string
		bps              int64
		field            string // the field the refusal names
	}{
		{"USD", "USD", "1", 0, "pair"},
		{"USD", "XXX", "1", 0, "pair"},
		{"XYZ", "EUR", "1", 0, "pair"},
		{"USD", "EUR", "-1", 0, ""},
		{"USD", "EUR", "0.9", 20_000, ""},
	} {
		_, err := g.FX.Set(context.Background(), tt.base, tt.quote, tt.mid, tt.bps)
		if postings.ErrorCode(err) != postings.EINVALID {
			t.Errorf("%+v: %v, want invalid", tt, err)
			continue
		}
		var pe *postings.Error
		if tt.field != "" && (!errors.As(err, &pe) || pe.Field != tt.field) {
			t.Errorf("%+v: %v does not name the field %q", tt, err, tt.field)
		}
	}
	rates, err := g.FX.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rates {
		if r.Source == "operator" {
			t.Errorf("a refused rate was stored: %+v", r)
		}
	}
}

// A limit set in USD converts at the mid rate, rounded down; without a rate
// it is the same number of whole units.
func TestUSDFigure(t *testing.T) {
	t.Parallel()
	g := gatewaytest.New(t, nil, gatewaytest.Options{})
	ctx := context.Background()
	if _, err := g.FX.Set(ctx, "USD", "JPY", "150.5", 0); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		cur  string
		want int64
	}{
		{"USD", 10_00},
		{"JPY", 1505}, // 10.00 USD × 150.5 = 1505 JPY
	} {
		got, err := fx.USDFigure(ctx, g.DB(), 10_00, postings.MustCurrency(tt.cur))
		if err != nil || got != tt.want {
			t.Errorf("%s: %d, %v, want %d", tt.cur, got, err, tt.want)
		}
	}
	rates, err := g.FX.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rates {
		if r.Base == "USD" && r.Quote == "KWD" {
			t.Skip("the seed has a USD/KWD rate: no currency is left without one")
		}
	}
	got, err := fx.USDFigure(ctx, g.DB(), 10_00, postings.MustCurrency("KWD"))
	if err != nil || got != 10_000 { // 10 whole units, 3 decimals
		t.Errorf("without a rate: %d, %v, want 10000", got, err)
	}
}

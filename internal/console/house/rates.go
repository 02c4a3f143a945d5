package house

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/paygate/gateway/internal/console/host"
	"github.com/paygate/gateway/internal/fx"
	"github.com/paygate/gateway/postings"
)

// The FX rates for operators: each rate with its age, and a form that sets
// a pair's rate and spread through fx.Service.Set, the command behind the
// CLI's fx set (the rate parsed once, by postings.ParseRate: apd with an
// explicit context, no float). The form's fields are checked here first
// so that a refusal names the field and keeps what was typed.

type rateRow struct {
	fx.Rate
	Age   time.Duration
	Stale bool
}

type ratesData struct {
	Rates []rateRow
	Saved bool
	Error string            // the refusal, naming the field
	Value map[string]string // what was typed, shown again after a refusal
}

// spreadBpsDefault is the spread the form starts with: the CLI's
// --spread-bps default.
const spreadBpsDefault = "50"

func (s *pages) rates(w http.ResponseWriter, r *http.Request, u *host.User) {
	s.renderRates(w, r, http.StatusOK, ratesData{Saved: r.URL.Query().Get("saved") == "1"})
}

func (s *pages) renderRates(w http.ResponseWriter, r *http.Request, status int, d ratesData) {
	rs, err := s.d.Rates.List(r.Context())
	if err != nil {
		s.h.DomainError(w, r, err)
		return
	}
	now := s.h.Now()
	d.Rates = make([]rateRow, 0, len(rs))
	for _, x := range rs {
		age := now.Sub(x.UpdatedAt).Truncate(time.Second)
		d.Rates = append(d.Rates, rateRow{Rate: x, Age: age, Stale: age > fx.RateMaxAgeDefault})
	}
	if d.Value == nil {
		d.Value = map[string]string{"spreadBps": spreadBpsDefault}
	}
	s.h.Render(w, r, status, "rates", "FX rates", d)
}

// rateFieldOf names a field of fx.Set's refusals as the form names it
// (its unknown currency is named "currency", by LookupCurrency).
var rateFieldOf = map[string]string{"pair": "pair", "currency": "pair", "rate": "rate", "spread": "spreadBps"}

// rateSet sets one pair's rate and spread (the CLI's fx set).
func (s *pages) rateSet(w http.ResponseWriter, r *http.Request, u *host.User) {
	v := map[string]string{"pair": strings.ToUpper(strings.TrimSpace(r.PostFormValue("pair"))),
		"rate": strings.TrimSpace(r.PostFormValue("rate")), "spreadBps": strings.TrimSpace(r.PostFormValue("spreadBps"))}
	refuse := func(msg string) { s.renderRates(w, r, http.StatusBadRequest, ratesData{Error: msg, Value: v}) }
	// BASE/QUOTE as the CLI splits --pair; fx.Set checks each currency.
	base, quote, ok := strings.Cut(v["pair"], "/")
	if !ok || len(base) != 3 || len(quote) != 3 {
		refuse("pair: must be BASE/QUOTE, two three-letter ISO 4217 codes, e.g. USD/EUR")
		return
	}
	for _, c := range []string{base, quote} {
		if _, err := postings.LookupCurrency(c); err != nil {
			refuse("pair: " + c + " is not a currency the gateway holds")
			return
		}
	}
	if v["rate"] == "" {
		refuse("rate: required, a decimal such as 0.92 (one BASE is that many QUOTE)")
		return
	}
	// 0 to 9999 basis points, ApplySpread's range; four digits at most,
	// so nothing past the bound reaches ParseInt.
	sp := v["spreadBps"]
	if sp == "" || len(sp) > 4 || strings.Trim(sp, "0123456789") != "" {
		refuse("spreadBps: a whole number of basis points from 0 to 9999")
		return
	}
	spread, err := strconv.ParseInt(sp, 10, 64)
	if err != nil {
		refuse("spreadBps: a whole number of basis points from 0 to 9999")
		return
	}
	s.command(w, r, 0, "fx.set", base+"/"+quote, "rate "+v["rate"]+", spread "+sp+" bps", "/operator/rates?saved=1",
		func(ctx context.Context) error {
			_, err := s.d.Rates.Set(ctx, base, quote, v["rate"], spread)
			return err
		},
		func(pe *postings.Error) {
			field := rateFieldOf[pe.Field]
			if field == "" {
				field = "rate"
			}
			refuse(field + ": " + pe.Message)
		})
}

package postings

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// FactBreak is a fact of an entry that does not add up: Check is one of
// the FactCheck* names.
type FactBreak struct {
	Check  string
	Detail string
}

// CheckFacts re-derives what an entry's facts determine (docs/audit.md,
// "Economic facts"): the converted amount from the recorded rate, spread
// and rounding; a fee from its rule; and the entry's own postings from
// both (a CARD_AUTH holds the converted amount plus its fee, a FEE moves
// its fee into fee revenue). An entry without facts has nothing to check.
// Whether the rate version is the one the rates table recorded is the
// caller's to check (FX gives it).
func (e *Entry) CheckFacts() []FactBreak {
	if !e.HasFacts() {
		return nil
	}
	var out []FactBreak
	add := func(check, format string, args ...any) {
		out = append(out, FactBreak{Check: check, Detail: fmt.Sprintf(format, args...)})
	}
	if v := e.Metadata[MetaFacts]; v != FactsVersion {
		add(FactCheckFacts, "unknown facts version %q", truncate(v, 16))
		return out
	}
	fx, hasFX, err := e.FX()
	if err != nil {
		add(FactCheckFacts, "%v", err)
		return out
	}
	fee, hasFee, err := e.Fee()
	if err != nil {
		add(FactCheckFacts, "%v", err)
		return out
	}
	if !hasFX && !hasFee {
		add(FactCheckFacts, "facts=%s without a conversion or a fee", FactsVersion)
	}
	if hasFX {
		key, v := fx.derived()
		if got, err := fx.derive(); err != nil || got != v {
			add(FactCheckFX, "%s %d, the rate gives %s", key, v, derived(got, err))
		}
		if text, has := e.Metadata[MetaFXClientRate]; has {
			if client, err := fx.ClientRate(); err != nil || !sameRate(text, client) {
				add(FactCheckFX, "fx_rate %s, the facts' mid rate less their spread is %s", truncate(text, 32), client)
			}
		}
	}
	if hasFee && fee.Basis != FeeShare {
		if got, err := fee.derive(); err != nil || got != fee.Amount {
			add(FactCheckFee, "fee_amount %d, the rule %s %s gives %s", fee.Amount, fee.Rule, fee.RuleVersion, derived(got, err))
		}
	}
	// The postings against the facts.
	switch {
	case e.Kind == KindCardAuth && hasFX:
		want := fx.Amount
		if hasFee {
			want += fee.Amount
		}
		if held, cur := e.moved(""); held != want || cur != fx.To.Code {
			add(FactCheckFX, "the entry holds %d %s, the facts give %d %s (fx_amount plus fee_amount)", held, cur, want, fx.To.Code)
		}
	case hasFX:
		// Any other conversion goes through the FX position (Validate): it
		// pays fx_from_amount of FROM into it and takes fx_amount of TO
		// out (a card transfer across currencies, either way).
		if in, out := e.throughFX(fx.From.Code, fx.To.Code); in != fx.FromAmount || out != fx.Amount {
			add(FactCheckFX, "the entry moves %d %s into the FX position and %d %s out, the facts give %d and %d",
				in, fx.From.Code, out, fx.To.Code, fx.FromAmount, fx.Amount)
		}
	case e.Kind == KindFee && hasFee:
		if got, _ := e.moved(AccountFeeRevenue); got != fee.Amount {
			add(FactCheckFee, "the entry moves %d into fee revenue, fee_amount is %d", got, fee.Amount)
		}
	}
	return out
}

// sameRate reports whether text is rate r.
func sameRate(text string, r Rate) bool {
	t, err := ParseRate(text)
	return err == nil && t.String() == r.String()
}

func derived(v int64, err error) string {
	if err != nil {
		return "no amount (" + err.Error() + ")"
	}
	return strconv.FormatInt(v, 10)
}

// moved sums the entry's postings into accounts of type dst (any account
// when dst is empty), with the currency of the last of them.
func (e *Entry) moved(dst AccountType) (sum int64, currency string) {
	for _, p := range e.Postings {
		if dst == "" || p.Destination.Type == dst {
			sum += p.Amount
			currency = p.Currency
		}
	}
	return sum, currency
}

// throughFX sums the entry's postings of from into its FX position and of
// to out of it.
func (e *Entry) throughFX(from, to string) (in, out int64) {
	for _, p := range e.Postings {
		if p.Currency == from && p.Destination.Type == AccountFXPosition {
			in += p.Amount
		}
		if p.Currency == to && p.Source.Type == AccountFXPosition {
			out += p.Amount
		}
	}
	return in, out
}

// FX returns the conversion the entry records; ok is false when it records
// none, and err names a fact that is missing or unreadable.
func (e *Entry) FX() (f FXFact, ok bool, err error) {
	m := e.Metadata
	pair, has := m[MetaFXPair]
	if !has || !e.HasFacts() {
		return f, false, nil
	}
	from, to, cut := strings.Cut(pair, "/")
	if !cut {
		return f, true, factErr(MetaFXPair, pair)
	}
	if f.From, err = LookupCurrency(from); err != nil {
		return f, true, factErr(MetaFXPair, pair)
	}
	if f.To, err = LookupCurrency(to); err != nil {
		return f, true, factErr(MetaFXPair, pair)
	}
	ints := []struct {
		key string
		to  *int64
	}{{MetaFXRateVersion, &f.RateVersion}, {MetaFXSpreadBps, &f.SpreadBps}, {MetaFXFromAmount, &f.FromAmount}, {MetaFXAmount, &f.Amount}}
	for _, i := range ints {
		if *i.to, err = strconv.ParseInt(m[i.key], 10, 64); err != nil {
			return f, true, factErr(i.key, m[i.key])
		}
	}
	if f.Mid, err = ParseRate(m[MetaFXMidRate]); err != nil {
		return f, true, factErr(MetaFXMidRate, m[MetaFXMidRate])
	}
	if f.RateAt, err = time.Parse(FactTimeLayout, m[MetaFXRateAt]); err != nil {
		return f, true, factErr(MetaFXRateAt, m[MetaFXRateAt])
	}
	switch inv := m[MetaFXInverse]; inv {
	case "", "1":
		f.Inverse = inv == "1"
	default:
		return f, true, factErr(MetaFXInverse, inv)
	}
	switch m[MetaFXRound] {
	case "up":
		f.Round = RoundUp
	case "down":
		f.Round = RoundDown
	default:
		return f, true, factErr(MetaFXRound, m[MetaFXRound])
	}
	return f, true, nil
}

// Fee returns the fee the entry records, like FX.
func (e *Entry) Fee() (f FeeFact, ok bool, err error) {
	m := e.Metadata
	amount, has := m[MetaFeeAmount]
	if !has || !e.HasFacts() {
		return f, false, nil
	}
	f.Rule, f.RuleVersion = m[MetaFee], m[MetaFeeRule]
	if f.Rule == "" || f.RuleVersion == "" {
		return f, true, factErr(MetaFeeRule, f.Rule+" "+f.RuleVersion)
	}
	if f.Amount, err = strconv.ParseInt(amount, 10, 64); err != nil || f.Amount < 0 {
		return f, true, factErr(MetaFeeAmount, amount)
	}
	basis, has := m[MetaFeeBasis]
	if !has {
		f.Basis = FeeShare
		return f, true, nil
	}
	ints := []struct {
		key, text string
		to        *int64
	}{{MetaFeeBasis, basis, &f.Basis}, {MetaFeeBps, m[MetaFeeBps], &f.Bps}, {MetaFeeFixed, m[MetaFeeFixed], &f.Fixed}}
	for _, i := range ints {
		if *i.to, err = strconv.ParseInt(i.text, 10, 64); err != nil || *i.to < 0 {
			return f, true, factErr(i.key, i.text)
		}
	}
	return f, true, nil
}

func factErr(key, value string) error {
	return Errorf(EINVALID, "the fact %s is missing or unreadable (%q)", key, truncate(value, metadataBytesMax))
}

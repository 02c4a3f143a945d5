package postings

import (
	"strconv"
	"time"
)

// The economic facts an entry carries in its hashed metadata (issue 30
// point 2, docs/audit.md "Economic facts"): the rate of a conversion with
// its source, and the rule of a fee. An entry that carries them has the
// metadata pair facts=<FactsVersion>, is encoded as GWE2 (hash.go), and
// audit verify re-derives its amounts from them with the functions of this
// package's one rounding home (rounding.go, fx.go): the entry proves its
// own arithmetic, whatever the tables it came from say later.
const (
	MetaFacts    = "facts" // the facts' schema version; present on every entry that carries facts
	FactsVersion = "1"

	// A conversion of FromAmount minor units of From into Amount minor units
	// of To at the client rate ApplySpread(mid, spread, RoundDown) (the mid
	// rate itself when the spread is 0), rounded in the recorded direction.
	MetaFXPair        = "fx_pair"         // FROM/TO, as fx_rates' base/quote
	MetaFXRateVersion = "fx_rate_version" // the fx_rate_versions row the rate came from
	MetaFXRateAt      = "fx_rate_at"      // that version's time, FactTimeLayout
	MetaFXMidRate     = "fx_mid_rate"     // its mid rate
	MetaFXSpreadBps   = "fx_spread_bps"   // the spread applied, in basis points
	MetaFXFromAmount  = "fx_from_amount"  // minor units of FROM
	MetaFXAmount      = "fx_amount"       // minor units of TO: the converted amount
	MetaFXRound       = "fx_round"        // "up" or "down"
	// An inverse conversion (a card withdrawal across currencies: the
	// merchant receives exactly fx_amount of TO and the card pays for it)
	// fixed the amount of TO and derived FROM's from it: fx_from_amount is
	// ConvertByInverse(fx_amount, TO, FROM, rate, fx_round). Absent on
	// every other conversion, so their bytes and hashes are unchanged.
	MetaFXInverse = "fx_inverse" // "1"
	// The client rate a card transfer applied, recorded before facts
	// existed; with facts it must be the facts' ClientRate.
	MetaFXClientRate = "fx_rate"

	// A fee: the rule that produced it and the amount. A fee computed from
	// a basis is Fixed + FeeBps(Basis, Bps, RoundUp); a fee that is the
	// captured share of a fee held with an authorization has no basis
	// (fee_basis absent) and is the share Hold.Capture computed.
	MetaFee        = "fee"        // the rule: cross_border, remittance
	MetaFeeRule    = "fee_rule"   // the rule's version or instance: "v1", "corridor:DE:EUR"
	MetaFeeBasis   = "fee_basis"  // minor units the percentage applies to
	MetaFeeBps     = "fee_bps"    // basis points
	MetaFeeFixed   = "fee_fixed"  // minor units added
	MetaFeeAmount  = "fee_amount" // minor units: the fee
	FactTimeLayout = "2006-01-02T15:04:05.000000Z"
)

// The names of a fact that does not add up, as audit verify reports them.
const (
	FactCheckFacts = "facts"      // a fact is missing or unreadable
	FactCheckFX    = "fx_amount"  // the converted amount is not the rate's
	FactCheckFee   = "fee_amount" // the fee is not its rule's
)

// FXFact is a conversion as an entry records it.
type FXFact struct {
	From, To    Currency
	FromAmount  int64
	Amount      int64
	Mid         Rate
	SpreadBps   int64
	RateVersion int64
	RateAt      time.Time
	Round       Rounding
	// Inverse marks a conversion that fixed Amount and derived FromAmount
	// (MetaFXInverse).
	Inverse bool
}

// FeeFact is a fee as an entry records it. Basis < 0 marks a share of a
// held fee, which has no basis of its own.
type FeeFact struct {
	Rule, RuleVersion string
	Basis, Bps, Fixed int64
	Amount            int64
}

// FeeShare is the Basis of a fee that is a share of a held fee.
const FeeShare = -1

// NewFXFact converts fromAmount of from into to at the rate version given
// (mid, spread, version, time), rounded in direction r, and records it.
func NewFXFact(fromAmount int64, from, to Currency, mid Rate, spreadBps, version int64, at time.Time, r Rounding) (FXFact, error) {
	f := FXFact{From: from, To: to, FromAmount: fromAmount, Mid: mid, SpreadBps: spreadBps, RateVersion: version,
		RateAt: at.UTC().Truncate(time.Microsecond), Round: r}
	var err error
	f.Amount, err = f.derive()
	return f, err
}

// NewInverseFXFact is the conversion that pays amount of to, fixed, with
// the amount of from the inverse rate gives, rounded in direction r (a
// card withdrawal across currencies: docs/ledger.md), and records it.
func NewInverseFXFact(amount int64, from, to Currency, mid Rate, spreadBps, version int64, at time.Time, r Rounding) (FXFact, error) {
	f := FXFact{From: from, To: to, Amount: amount, Mid: mid, SpreadBps: spreadBps, RateVersion: version,
		RateAt: at.UTC().Truncate(time.Microsecond), Round: r, Inverse: true}
	var err error
	f.FromAmount, err = f.derive()
	return f, err
}

// ClientRate is the rate the conversion applied: the mid rate, less the
// spread rounded down when there is one.
func (f FXFact) ClientRate() (Rate, error) {
	if f.SpreadBps == 0 {
		return f.Mid, nil
	}
	return ApplySpread(f.Mid, f.SpreadBps, RoundDown)
}

// derive is the amount the fact's own rate gives: the converted amount,
// or for an inverse conversion the amount of FROM.
func (f FXFact) derive() (int64, error) {
	rate, err := f.ClientRate()
	if err != nil {
		return 0, err
	}
	if f.Inverse {
		return ConvertByInverse(f.Amount, f.To, f.From, rate, f.Round)
	}
	return Convert(f.FromAmount, f.From, f.To, rate, f.Round)
}

// derived is the recorded amount derive gives, with its key.
func (f FXFact) derived() (key string, v int64) {
	if f.Inverse {
		return MetaFXFromAmount, f.FromAmount
	}
	return MetaFXAmount, f.Amount
}

// NewFeeFact is a percentage-and-fixed fee on basis: Fixed + FeeBps(basis,
// bps, RoundUp), the house rule for a fee (rounding.go).
func NewFeeFact(rule, ruleVersion string, basis, bps, fixed int64) (FeeFact, error) {
	f := FeeFact{Rule: rule, RuleVersion: ruleVersion, Basis: basis, Bps: bps, Fixed: fixed}
	var err error
	f.Amount, err = f.derive()
	return f, err
}

func (f FeeFact) derive() (int64, error) {
	v, err := FeeBps(f.Basis, f.Bps, RoundUp)
	if err != nil {
		return 0, err
	}
	if f.Fixed < 0 || f.Fixed > AmountMinorMax-v {
		return 0, Errorf(EINTERNAL, "fixed fee %d out of range", f.Fixed)
	}
	return v + f.Fixed, nil
}

// PutFacts adds the facts given (either may be nil) to meta, marked with
// the facts' version, and returns it (a new map when meta is nil).
func PutFacts(meta map[string]string, fx *FXFact, fee *FeeFact) map[string]string {
	if meta == nil {
		meta = make(map[string]string, 16)
	}
	meta[MetaFacts] = FactsVersion
	itoa := func(v int64) string { return strconv.FormatInt(v, 10) }
	if fx != nil {
		meta[MetaFXPair] = fx.From.Code + "/" + fx.To.Code
		meta[MetaFXRateVersion] = itoa(fx.RateVersion)
		meta[MetaFXRateAt] = fx.RateAt.UTC().Format(FactTimeLayout)
		meta[MetaFXMidRate] = fx.Mid.String()
		meta[MetaFXSpreadBps] = itoa(fx.SpreadBps)
		meta[MetaFXFromAmount] = itoa(fx.FromAmount)
		meta[MetaFXAmount] = itoa(fx.Amount)
		meta[MetaFXRound] = fx.Round.String()
		if fx.Inverse {
			meta[MetaFXInverse] = "1"
		}
	}
	if fee != nil {
		meta[MetaFee] = fee.Rule
		meta[MetaFeeRule] = fee.RuleVersion
		if fee.Basis != FeeShare {
			meta[MetaFeeBasis] = itoa(fee.Basis)
			meta[MetaFeeBps] = itoa(fee.Bps)
			meta[MetaFeeFixed] = itoa(fee.Fixed)
		}
		meta[MetaFeeAmount] = itoa(fee.Amount)
	}
	return meta
}

// HasFacts reports whether the entry carries facts (and is encoded GWE2).
func (e *Entry) HasFacts() bool { return len(e.Metadata) > 0 && e.Metadata[MetaFacts] != "" }

// The fee rules of the gateway, as entries name them (fee, fee_rule).
const (
	FeeRuleCrossBorder        = "cross_border" // CrossBorderFeeBps of an authorization in another currency
	FeeRuleCrossBorderVersion = "v1"           // 150 bps of the converted amount, rounded up
	FeeRuleRemittance         = "remittance"   // the corridor's fixed part plus its basis points
)

// Facts are the facts of the hold's conversion and cross-border fee, as
// the CARD_AUTH entry that holds it records them, with the rate version it
// was converted at. The hold's rate is the mid rate: an authorization
// takes no spread (docs/network.md), and its amount rounded up.
func (h Hold) Facts(rateVersion int64, rateAt time.Time) (FXFact, FeeFact) {
	return FXFact{From: h.Txn, To: h.Card, FromAmount: h.TxnAmount, Amount: h.Amount, Mid: h.Rate,
			RateVersion: rateVersion, RateAt: rateAt.UTC().Truncate(time.Microsecond), Round: RoundUp},
		FeeFact{Rule: FeeRuleCrossBorder, RuleVersion: FeeRuleCrossBorderVersion, Basis: h.Amount, Bps: CrossBorderFeeBps, Amount: h.Fee}
}

// CapturedFeeFact is the fact of the cross-border fee a clearing takes:
// a share of the fee held with the authorization (Hold.Capture), which has
// no basis of its own.
func CapturedFeeFact(fee int64) FeeFact {
	return FeeFact{Rule: FeeRuleCrossBorder, RuleVersion: FeeRuleCrossBorderVersion, Basis: FeeShare, Amount: fee}
}

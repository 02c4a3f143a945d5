package house

import (
	"context"
	"net/http"
	"strings"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/console/host"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/postings"
)

// One merchant's page for operators: its IP whitelist, KYB tier, limits per
// currency and BIN access, each changed by the domain command the CLI runs
// (merchant whitelist, merchant kyb, merchant limits, bin access). Each
// field is checked before the command; a refusal re-renders the page with
// 400 and the field named, keeping what was typed.

var kybTiers = []string{cards.KYBTier1, cards.KYBTier2, cards.KYBTier3}

// savedNotices are the notices a change redirects to (?saved=).
var savedNotices = map[string]string{
	"whitelist":    "IP whitelist saved.",
	"kyb":          "KYB tier set; the limits went back to the tier's defaults.",
	"limits":       "Limits saved.",
	"bins":         "BIN access saved.",
	"callback_url": "Callback URL saved.",
	"deposit":      "Deposit booked: a DEPOSIT entry in the journal, counted in the funding balance below.",
}

type limitRow struct {
	Currency                                  string
	CardBalanceMax, DailyCardIssueMax, Issued string // in the currency's units
}

type binAccessRow struct {
	cards.BIN
	Open     bool   // the merchant may issue on it
	Override string // "allow", "deny" or "" (the default rule)
}

type merchantPageData struct {
	M         *merchant.Merchant
	KYBTier   string
	Tiers     []string
	Limits    []limitRow
	BINs      []binAccessRow
	Saved     string
	Error     string            // the refusal, naming the field
	Form      string            // which form it concerns: whitelist, kyb, limits, bins, callback-url, deposit, roll-key
	Value     map[string]string // what was typed, shown again
	Whitelist string
	// CallbackURL is the merchant's default callback URL, or what was
	// typed into its form.
	CallbackURL string
	Funding     []fundingRow // the funding balance per currency
	RollMax     int          // the longest overlap of a key roll, in hours
	RollIdem    string       // the key roll form's idempotency key (keys.go)
}

// fundingRow is one currency's funding balance, where a deposit lands.
type fundingRow struct {
	Currency, Balance string
}

// operatorMerchant resolves the {shopNo} of the URL; an unknown or
// malformed one is a 404.
func (s *pages) operatorMerchant(w http.ResponseWriter, r *http.Request) *merchant.Merchant {
	shop := r.PathValue("shopNo")
	if len(shop) > 64 || !postings.IsRefText(shop) {
		s.h.NotFound(w, r)
		return nil
	}
	m, err := s.d.Merchants.MerchantByShopNo(r.Context(), shop)
	if err != nil {
		s.h.DomainError(w, r, err)
		return nil
	}
	return m
}

func (s *pages) merchantPage(w http.ResponseWriter, r *http.Request, u *host.User) {
	m := s.operatorMerchant(w, r)
	if m == nil {
		return
	}
	d := merchantPageData{Saved: savedNotices[r.URL.Query().Get("saved")]}
	s.renderMerchant(w, r, http.StatusOK, m, d)
}

// renderMerchant fills the page from the domains and renders it.
func (s *pages) renderMerchant(w http.ResponseWriter, r *http.Request, status int, m *merchant.Merchant, d merchantPageData) {
	ctx := r.Context()
	p, err := s.d.Cards.Profile(ctx, m.ID)
	if err != nil {
		s.h.DomainError(w, r, err)
		return
	}
	d.M, d.KYBTier, d.Tiers = &p.Merchant, p.KYBTier, kybTiers
	if d.Form != "whitelist" {
		d.Whitelist = strings.Join(p.Merchant.IPWhitelist, "\n")
	}
	if d.Form != "callback_url" {
		d.CallbackURL = p.Merchant.CallbackURL
	}
	if d.Funding, err = s.funding(r, &p.Merchant); err != nil {
		s.h.DomainError(w, r, err)
		return
	}
	d.RollMax = keyOverlapHoursMax
	if d.RollIdem, err = rollFormKey.new(); err != nil {
		s.h.Internal(w, r, err)
		return
	}
	for _, l := range p.Limits {
		c, err := postings.LookupCurrency(l.Currency)
		if err != nil {
			continue // a limit in a currency the gateway no longer holds: nothing to show it in
		}
		d.Limits = append(d.Limits, limitRow{Currency: l.Currency, CardBalanceMax: postings.FormatMinor(l.CardBalanceMax, c),
			DailyCardIssueMax: postings.FormatMinor(l.DailyCardIssueMax, c), Issued: postings.FormatMinor(l.DailyCardIssued, c)})
	}
	all, err := s.d.Cards.BINs(ctx)
	if err != nil {
		s.h.DomainError(w, r, err)
		return
	}
	open, err := s.d.Cards.MerchantBINs(ctx, m.ID)
	if err != nil {
		s.h.DomainError(w, r, err)
		return
	}
	over, err := s.binOverrides(ctx, m.ID)
	if err != nil {
		s.h.Internal(w, r, err)
		return
	}
	isOpen := map[string]bool{}
	for _, b := range open {
		isOpen[b.Bin+"/"+b.Currency] = true
	}
	for _, b := range all {
		d.BINs = append(d.BINs, binAccessRow{BIN: b, Open: isOpen[b.Bin+"/"+b.Currency], Override: over[b.Bin+"/"+b.Currency]})
	}
	s.h.Render(w, r, status, "merchant_admin", p.Merchant.Name+" ("+p.Merchant.ShopNo+")", d)
}

// refuse re-renders the merchant's page with 400, the message naming the
// field and the values typed into the form.
func (s *pages) refuse(w http.ResponseWriter, r *http.Request, m *merchant.Merchant, form, msg string, value map[string]string) {
	d := merchantPageData{Error: msg, Form: form, Value: value}
	switch form {
	case "whitelist":
		d.Whitelist = value["ipWhitelist"]
	case "callback_url":
		d.CallbackURL = value["callbackUrl"]
	}
	s.renderMerchant(w, r, http.StatusBadRequest, m, d)
}

// changed sends the browser back to the page after a change (its row
// resolved by the handler, internal/console/audit_intent.go).
func (s *pages) changed(w http.ResponseWriter, r *http.Request, m *merchant.Merchant, form string) {
	http.Redirect(w, r, savedPath(m, form), http.StatusSeeOther)
}

// savedPath is the merchant page saying form was saved.
func savedPath(m *merchant.Merchant, form string) string {
	return "/operator/merchants/" + m.ShopNo + "?saved=" + form
}

// merchantCommand runs one of the merchant page's domain commands between
// its write-ahead row and that row's outcome (internal/console/audit_intent.go), then
// answers: back to the page, or the command's refusal.
func (s *pages) merchantCommand(w http.ResponseWriter, r *http.Request, m *merchant.Merchant, form string,
	value map[string]string, detail string, run func(context.Context) error) {
	s.command(w, r, m.ID, "merchant."+form, m.ShopNo, host.Clip(detail, 500), savedPath(m, form), run,
		func(pe *postings.Error) { s.refuse(w, r, m, form, pe.Error(), value) })
}

// commandError answers a domain command's refusal: the user's mistake
// re-renders the form, anything else is domainError's.
func (s *pages) commandError(w http.ResponseWriter, r *http.Request, m *merchant.Merchant, form string, value map[string]string, err error) {
	if postings.ErrorCode(err) == postings.EINVALID {
		s.refuse(w, r, m, form, postings.AsError(err).Error(), value)
		return
	}
	s.h.DomainError(w, r, err)
}

// whitelistEntriesMax bounds the lines of the whitelist form before the
// ledger's own bound (64) is applied to what is left.
const whitelistEntriesMax = 256

func (s *pages) merchantWhitelist(w http.ResponseWriter, r *http.Request, u *host.User) {
	m := s.operatorMerchant(w, r)
	if m == nil {
		return
	}
	text := r.PostFormValue("ipWhitelist")
	value := map[string]string{"ipWhitelist": text}
	// Commas or lines, as the CLI's comma-separated list.
	fields := strings.FieldsFunc(text, func(c rune) bool { return c == ',' || c == '\n' || c == '\r' })
	if len(fields) > whitelistEntriesMax {
		s.refuse(w, r, m, "whitelist", "ip_whitelist: too many entries", value)
		return
	}
	for _, f := range fields {
		if host.HasControl(strings.TrimSpace(f)) || len(f) > 64 {
			s.refuse(w, r, m, "whitelist", "ip_whitelist: "+host.Clip(strings.TrimSpace(f), 64)+" is not an address or a CIDR prefix", value)
			return
		}
	}
	list, err := merchant.NormalizeIPWhitelist(fields)
	if err != nil {
		s.commandError(w, r, m, "whitelist", value, err)
		return
	}
	s.merchantCommand(w, r, m, "whitelist", value, strings.Join(list, ","), func(ctx context.Context) error {
		return s.d.Merchants.SetIPWhitelist(ctx, m.ID, list)
	})
}

func (s *pages) merchantKYB(w http.ResponseWriter, r *http.Request, u *host.User) {
	m := s.operatorMerchant(w, r)
	if m == nil {
		return
	}
	tier := r.PostFormValue("tier")
	value := map[string]string{"tier": tier}
	known := false
	for _, t := range kybTiers {
		known = known || t == tier
	}
	if !known {
		s.refuse(w, r, m, "kyb", "tier: must be one of TIER_1, TIER_2, TIER_3", value)
		return
	}
	s.merchantCommand(w, r, m, "kyb", value, tier, func(ctx context.Context) error {
		return s.d.Cards.SetKYBTier(ctx, m.ID, tier)
	})
}

func (s *pages) merchantLimits(w http.ResponseWriter, r *http.Request, u *host.User) {
	m := s.operatorMerchant(w, r)
	if m == nil {
		return
	}
	value := map[string]string{"currency": r.PostFormValue("currency"),
		"cardBalanceMax": strings.TrimSpace(r.PostFormValue("cardBalanceMax")), "dailyCardIssueMax": strings.TrimSpace(r.PostFormValue("dailyCardIssueMax"))}
	cur, err := postings.LookupCurrency(value["currency"])
	if err != nil || len(value["currency"]) != 3 {
		s.refuse(w, r, m, "limits", "currency: "+host.Clip(value["currency"], 8)+" is not a currency the gateway holds", value)
		return
	}
	amounts := map[string]int64{}
	for _, f := range []string{"cardBalanceMax", "dailyCardIssueMax"} {
		v := value[f]
		if v == "" || len(v) > 32 {
			s.refuse(w, r, m, "limits", f+": required, a decimal in "+cur.Code+" such as 10000.00", value)
			return
		}
		n, err := postings.ParseSignedAmount(v, cur)
		if err != nil {
			s.refuse(w, r, m, "limits", f+": "+postings.AsError(err).Message, value)
			return
		}
		if n < 0 {
			s.refuse(w, r, m, "limits", f+": cannot be negative", value)
			return
		}
		amounts[f] = n
	}
	detail := cur.Code + " cardBalanceMax=" + value["cardBalanceMax"] + " dailyCardIssueMax=" + value["dailyCardIssueMax"]
	s.merchantCommand(w, r, m, "limits", value, detail, func(ctx context.Context) error {
		return s.d.Cards.SetLimit(ctx, m.ID, cur.Code, amounts["cardBalanceMax"], amounts["dailyCardIssueMax"])
	})
}

func (s *pages) merchantBINAccess(w http.ResponseWriter, r *http.Request, u *host.User) {
	m := s.operatorMerchant(w, r)
	if m == nil {
		return
	}
	bin, currency, mode := r.PostFormValue("bin"), r.PostFormValue("currency"), r.PostFormValue("mode")
	value := map[string]string{"bin": bin, "currency": currency, "mode": mode}
	var allowed *bool
	switch mode {
	case "allow", "deny":
		v := mode == "allow"
		allowed = &v
	case "default":
	default:
		s.refuse(w, r, m, "bins", "mode: must be allow, deny or default", value)
		return
	}
	// Only an entry of the catalogue, named as such: for another the
	// command would meet the foreign key, an answer without the field.
	all, err := s.d.Cards.BINs(r.Context())
	if err != nil {
		s.h.DomainError(w, r, err)
		return
	}
	found := false
	for _, b := range all {
		found = found || (b.Bin == bin && b.Currency == currency)
	}
	if !found {
		s.refuse(w, r, m, "bins", "bin: "+host.Clip(bin, 16)+" in "+host.Clip(currency, 8)+" is not in the BIN catalogue", value)
		return
	}
	s.merchantCommand(w, r, m, "bins", value, bin+" "+currency+" "+mode, func(ctx context.Context) error {
		return s.d.Cards.SetBINAccess(ctx, m.ID, bin, currency, allowed)
	})
}

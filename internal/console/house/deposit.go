package house

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/paygate/gateway/internal/console/host"
	"github.com/paygate/gateway/internal/deposit"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// A merchant deposit on the operator's merchant page: the CLI's merchant
// deposit, which credits the merchant's funding account from its bank as a
// DEPOSIT entry (ledger.Deposit). It moves money, so the form leads to a
// confirmation page first, as the card actions do. The amount is parsed by
// postings.ParseAmount, as the CLI parses --amount: a decimal in the
// currency's units with at most its ISO 4217 exponent of decimals, more
// than zero, at most the journal's bound; never a float.
//
// The bank's reference of the transfer is required (internal/deposit,
// docs/finance.md): checked at either step, naming bankReference, and
// unique per merchant and currency, which the ledger enforces.
//
// The confirmation page carries an idempotency key made for that form, so
// the confirmed form sent twice (a double click, a reload that re-posts)
// deposits once: the second answer is the ledger's replay of the first.

// depositAmountBytesMax bounds the amount field before it is parsed.
const depositAmountBytesMax = 32

type depositData struct {
	M        *merchant.Merchant
	Currency string
	Amount   string // as typed, sent again with the confirmation
	BankRef  string // the bank's reference, sent again with the confirmation
	Shown    string // the amount formatted in the currency
	Balance  string // the funding balance before the deposit
	Key      string
}

// depositInput checks the deposit form's currency and amount; msg names
// the field that is wrong.
func depositInput(r *http.Request, m *merchant.Merchant) (cur postings.Currency, minor int64, value map[string]string, msg string) {
	value = map[string]string{"currency": strings.ToUpper(strings.TrimSpace(r.PostFormValue("currency"))),
		"amount": strings.TrimSpace(r.PostFormValue("amount")), "bankReference": host.Clip(strings.TrimSpace(r.PostFormValue("bankReference")), 64)}
	code := value["currency"]
	c, err := postings.LookupCurrency(code)
	if err != nil || len(code) != 3 || !m.HasCurrency(code) {
		return cur, 0, value, "currency: " + host.Clip(code, 8) + " is not one of the merchant's currencies"
	}
	a := value["amount"]
	if a == "" || len(a) > depositAmountBytesMax {
		return cur, 0, value, "amount: required, a decimal in " + code + " such as 1000.00"
	}
	minor, err = postings.ParseAmount(a, c)
	if err != nil {
		return cur, 0, value, "amount: " + postings.AsError(err).Message
	}
	if err := deposit.CheckBankReference(value["bankReference"]); err != nil {
		return cur, 0, value, "bankReference: " + postings.AsError(err).Message
	}
	return c, minor, value, ""
}

// depositForm reads the deposit form of the page's merchant, as both of
// its steps (confirm, run) check it; ok is false after answering.
func (s *pages) depositForm(w http.ResponseWriter, r *http.Request) (m *merchant.Merchant, cur postings.Currency, minor int64, value map[string]string, ok bool) {
	if m = s.operatorMerchant(w, r); m == nil {
		return nil, cur, 0, nil, false
	}
	cur, minor, value, msg := depositInput(r, m)
	if msg != "" {
		s.refuse(w, r, m, "deposit", msg, value)
		return nil, cur, 0, nil, false
	}
	return m, cur, minor, value, true
}

// depositConfirm checks the form and shows what the deposit will do, with
// a form that confirms it.
func (s *pages) depositConfirm(w http.ResponseWriter, r *http.Request, u *host.User) {
	m, cur, minor, value, ok := s.depositForm(w, r)
	if !ok {
		return
	}
	bal, err := s.d.Ledger.Balance(r.Context(), postings.MerchantAccount(m.ID, postings.AccountFunding, cur.Code))
	if err != nil {
		s.h.DomainError(w, r, err)
		return
	}
	key, err := depositFormKey.new()
	if err != nil {
		s.h.Internal(w, r, err)
		return
	}
	s.h.Render(w, r, http.StatusOK, "deposit_confirm", "Confirm: deposit to "+m.ShopNo, depositData{M: m, Currency: cur.Code,
		Amount: value["amount"], BankRef: value["bankReference"], Shown: postings.FormatMinor(minor, cur), Balance: postings.FormatMinor(bal, cur),
		Key: key})
}

// deposit runs the confirmed deposit.
func (s *pages) deposit(w http.ResponseWriter, r *http.Request, u *host.User) {
	m, cur, minor, value, ok := s.depositForm(w, r)
	if !ok {
		return
	}
	key := r.PostFormValue("idempotencyKey")
	if !depositFormKey.valid(key) {
		s.refuse(w, r, m, "deposit", "idempotencyKey: missing or malformed; start the deposit again from this page", value)
		return
	}
	// The pending row names the key: with it, the entry of a deposit whose
	// outcome went unrecorded is found (docs/audit.md).
	a, ok := s.h.Begin(w, r, m.ID, "merchant.deposit", m.ShopNo, postings.FormatMinor(minor, cur)+" "+cur.Code+", bank reference "+value["bankReference"]+", key "+key)
	if !ok {
		return
	}
	rec, err := s.d.Deposits.Deposit(r.Context(), m.ID, cur.Code, minor, value["bankReference"], &ledger.Idempotency{Key: key})
	if err != nil {
		a.Finish(err, 0, "", "")
		s.commandError(w, r, m, "deposit", value, err)
		return
	}
	// A replayed key answers the first deposit's entry: the row says which
	// entry, so a double submit shows as two rows of one seq.
	a.Finish(nil, 0, "", "seq "+strconv.FormatInt(rec.Seq, 10))
	s.changed(w, r, m, "deposit")
}

// funding lists the merchant's funding balance in each of its currencies.
func (s *pages) funding(r *http.Request, m *merchant.Merchant) ([]fundingRow, error) {
	out := make([]fundingRow, 0, len(m.Currencies))
	for _, code := range m.Currencies {
		cur, err := postings.LookupCurrency(code)
		if err != nil {
			continue // a currency the gateway no longer holds: nothing to show it in
		}
		bal, err := s.d.Ledger.Balance(r.Context(), postings.MerchantAccount(m.ID, postings.AccountFunding, code))
		if err != nil {
			return nil, err
		}
		out = append(out, fundingRow{Currency: code, Balance: postings.FormatMinor(bal, cur)})
	}
	return out, nil
}

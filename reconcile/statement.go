package reconcile

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/paygate/gateway/internal/audit"
	"github.com/paygate/gateway/postings"
)

// StatementSource is what Statement needs from the ledger.
type StatementSource interface {
	// StatementAccounts returns every billable account of the merchant with
	// its bill over [from, to) and its balance, read in one snapshot.
	StatementAccounts(ctx context.Context, merchant int64, from, to time.Time) ([]audit.StatementAccount, error)
}

var _ StatementSource = (*audit.Service)(nil)

// StatementReport is a merchant's statement over [From, To): per billable
// account, the opening balance, the movements of the bill and the closing
// balance, each account checked.
type StatementReport struct {
	Merchant int64     `json:"merchant"`
	ShopNo   string    `json:"shopNo,omitempty"` // set by the caller, for the reader
	From     time.Time `json:"from"`
	To       time.Time `json:"to"` // excluded
	// Accounts lists the accounts with a balance or a movement in the
	// period, and every account that fails a check.
	Accounts []StatementAccount `json:"accounts"`
	// AccountsIdle counts the accounts left out of Accounts: zero at both
	// ends of the period, no movement in it, and nothing wrong.
	AccountsIdle int              `json:"accountsIdle"`
	Currencies   []StatementTotal `json:"currencies"`
	Mismatches   int              `json:"mismatches"`
}

// StatementAccount is one billable account's statement line.
type StatementAccount struct {
	// Account is "funding", the card number (its available balance),
	// HELD:<card> or RECEIVABLE:<card>.
	Account  string         `json:"account"`
	Address  string         `json:"address"` // the ledger's account address
	Currency string         `json:"currency"`
	Opening  postings.Money `json:"opening"`   // the balance when the period begins
	Moved    postings.Money `json:"movements"` // the sum of the bill amounts in the period
	Lines    int64          `json:"lines"`     // the bill lines in the period
	Closing  postings.Money `json:"closing"`   // the balance when the period ends
	Balance  postings.Money `json:"balance"`   // the balance now
	// Problems names each check that fails; empty when the account
	// reconciles.
	Problems []string `json:"problems,omitempty"`
}

// StatementTotal sums the accounts of one currency.
type StatementTotal struct {
	Currency string         `json:"currency"`
	Accounts int            `json:"accounts"`
	Opening  postings.Money `json:"opening"`
	Moved    postings.Money `json:"movements"`
	Lines    int64          `json:"lines"`
	Closing  postings.Money `json:"closing"`
	Balance  postings.Money `json:"balance"`
}

// OK reports whether every account reconciles.
func (r *StatementReport) OK() bool { return r.Mismatches == 0 }

// Statement checks merchant's statement over [from, to). For each billable
// account (each currency's funding account, each card's available balance)
// the opening balance (balance_after of the last bill line before from, or
// 0) plus the bill amounts in the period must equal the closing balance
// (balance_after of the last line before to), and the closing balance plus
// the bill amounts since must equal the balance now: for the latest period,
// the closing balance is the balance.
func Statement(ctx context.Context, src StatementSource, merchant int64, from, to time.Time) (*StatementReport, error) {
	accts, err := src.StatementAccounts(ctx, merchant, from, to)
	if err != nil {
		return nil, err
	}
	rep := &StatementReport{Merchant: merchant, From: from.UTC(), To: to.UTC(), Accounts: []StatementAccount{}}
	totals := map[string]*StatementTotal{}
	var order []string // currencies in the order the accounts come
	for _, a := range accts {
		cur, err := postings.LookupCurrency(a.Account.Currency)
		if err != nil {
			return nil, fmt.Errorf("reconcile: a %s account: %w", a.Account.Type, err)
		}
		line, problems := checkStatementAccount(a, cur)
		t := totals[cur.Code]
		if t == nil {
			t = &StatementTotal{Currency: cur.Code, Opening: money(0, cur), Moved: money(0, cur), Closing: money(0, cur), Balance: money(0, cur)}
			totals[cur.Code] = t
			order = append(order, cur.Code)
		}
		t.Accounts++
		t.Lines += a.Lines
		t.Opening.Minor += a.Opening
		t.Moved.Minor += a.Moved
		t.Closing.Minor += a.Closing
		t.Balance.Minor += a.Balance
		if len(problems) > 0 {
			rep.Mismatches++
		}
		if len(problems) == 0 && a.Lines == 0 && a.Opening == 0 && a.Closing == 0 {
			rep.AccountsIdle++
			continue
		}
		rep.Accounts = append(rep.Accounts, line)
	}
	rep.Currencies = make([]StatementTotal, len(order))
	for i, c := range order {
		rep.Currencies[i] = *totals[c]
	}
	return rep, nil
}

// checkStatementAccount makes an account's statement line and names what
// does not add up.
func checkStatementAccount(a audit.StatementAccount, cur postings.Currency) (StatementAccount, []string) {
	line := StatementAccount{
		Account: "funding", Address: a.Account.Address(), Currency: cur.Code,
		Opening: money(a.Opening, cur), Moved: money(a.Moved, cur), Lines: a.Lines,
		Closing: money(a.Closing, cur), Balance: money(a.Balance, cur),
	}
	switch {
	case a.Account.Type == postings.AccountCardHeld:
		line.Account = "HELD:" + a.Account.Card // the bill's names (internal/bill/position.go)
	case a.Account.Type == postings.AccountCardReceivable:
		line.Account = "RECEIVABLE:" + a.Account.Card
	case a.Account.Card != "":
		line.Account = a.Account.Card
	}
	if sum, ok := addChecked(a.Opening, a.Moved); !ok || sum != a.Closing {
		line.Problems = append(line.Problems, fmt.Sprintf("opening %s + movements %s = %s, but the closing balance is %s",
			line.Opening, line.Moved, formatSum(sum, ok, cur), line.Closing))
	}
	switch sum, ok := addChecked(a.Closing, a.After); {
	case !a.HasBalance:
		line.Problems = append(line.Problems, "the account has no balance row")
	case !ok || sum != a.Balance:
		line.Problems = append(line.Problems, fmt.Sprintf("closing %s + later movements %s = %s, but the balance is %s",
			line.Closing, money(a.After, cur), formatSum(sum, ok, cur), line.Balance))
	}
	return line, line.Problems
}

func money(minor int64, cur postings.Currency) postings.Money {
	return postings.Money{Minor: minor, Currency: cur}
}

func formatSum(sum int64, ok bool, cur postings.Currency) string {
	if !ok {
		return "an overflow"
	}
	return money(sum, cur).String()
}

// addChecked adds two int64 values and reports overflow instead of wrapping.
func addChecked(a, b int64) (int64, bool) {
	s := a + b
	if (a > 0 && b > 0 && s < 0) || (a < 0 && b < 0 && s >= 0) {
		return 0, false
	}
	return s, true
}

// WriteText prints the statement as a table, mismatches named under the
// account they concern.
func (r *StatementReport) WriteText(w io.Writer) error {
	who := fmt.Sprintf("merchant %d", r.Merchant)
	if r.ShopNo != "" {
		who = fmt.Sprintf("%s (merchant %d)", r.ShopNo, r.Merchant)
	}
	fmt.Fprintf(w, "Statement of %s from %s to %s (end excluded)\n\n", who,
		r.From.Format(time.RFC3339), r.To.Format(time.RFC3339))
	tb := newTable([]string{"ACCOUNT", "CURRENCY", "OPENING", "MOVEMENTS", "LINES", "CLOSING", "BALANCE NOW", "CHECK"}, 2, 3, 4, 5, 6)
	for _, a := range r.Accounts {
		check := "ok"
		if len(a.Problems) > 0 {
			check = "MISMATCH"
		}
		tb.add(a.Account, a.Currency, amountText(a.Opening), amountText(a.Moved), fmt.Sprint(a.Lines),
			amountText(a.Closing), amountText(a.Balance), check)
	}
	for _, t := range r.Currencies {
		tb.add("total, "+plural(t.Accounts, "account"), t.Currency, amountText(t.Opening), amountText(t.Moved),
			fmt.Sprint(t.Lines), amountText(t.Closing), amountText(t.Balance), "")
	}
	if err := tb.write(w); err != nil {
		return err
	}
	fmt.Fprintln(w)
	for _, a := range r.Accounts {
		for _, p := range a.Problems {
			fmt.Fprintf(w, "MISMATCH %s %s: %s\n", a.Currency, a.Account, p)
		}
	}
	verdict := "OK"
	if !r.OK() {
		verdict = "FAILED"
	}
	_, err := fmt.Fprintf(w, "%s: %d accounts in %d currencies (%d idle: no balance, no movement, not listed); mismatches: %d\n",
		verdict, len(r.Accounts)+r.AccountsIdle, len(r.Currencies), r.AccountsIdle, r.Mismatches)
	return err
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func amountText(m postings.Money) string { return postings.FormatMinor(m.Minor, m.Currency) }

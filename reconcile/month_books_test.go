package reconcile_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/cockroachdb/apd/v3"

	"github.com/paygate/gateway/internal/audit"
	"github.com/paygate/gateway/internal/bill"
	"github.com/paygate/gateway/internal/gatewaytest"
	"github.com/paygate/gateway/postings"
	"github.com/paygate/gateway/reconcile"
)

// checkBooks closes the month for every merchant and currency: the bill's
// JSON and CSV agree line for line; summed with apd per account they are
// the statement's movements, and opening + movements = closing = the
// balance for every account (funding, cards, held, receivable), day by day
// too; the balance report adds up per class, its categories are the bill's
// lines by category and its closing the statement's; FEE lines are the fee
// revenue; audit verify is clean.
func (mo *month) checkBooks(t *testing.T) {
	t.Helper()
	srv := mo.server(t)
	seen := map[string]int{}
	for _, sh := range mo.shops {
		lines := mo.billJSON(t, srv, sh)
		mo.billCSVIsJSON(t, srv, sh, lines)
		sums := map[string]*apd.Decimal{}  // currency + " " + account → Σ amount
		byCat := map[string]*apd.Decimal{} // currency + " " + class + " " + category
		fees := map[string]*apd.Decimal{}
		for _, ln := range lines {
			seen[ln.Type]++
			k := ln.Currency + " " + ln.Account
			sums[k] = add(t, sums[k], ln.Amount.String())
			if sums[k].Cmp(dec(t, ln.BalanceAfter.String())) != 0 {
				t.Errorf("%s %s line %s: balanceAfter %s, the lines sum to %s", sh.m.ShopNo, k, ln.BillID, ln.BalanceAfter, sums[k])
			}
			cat, ok := monthCategories[ln.Type]
			if !ok {
				t.Errorf("%s: line type %s has no reporting category", sh.m.ShopNo, ln.Type)
			}
			ck := ln.Currency + " " + classOf(ln.AccountType) + " " + string(cat)
			byCat[ck] = add(t, byCat[ck], ln.Amount.String())
			if ln.Type == string(postings.KindFee) {
				fees[ln.Currency] = add(t, fees[ln.Currency], ln.Amount.String())
			}
		}
		closing := mo.checkStatements(t, sh, sums)
		mo.checkReport(t, srv, sh, byCat, closing)
		mo.checkFees(t, sh, fees)
	}
	// The month exercised every movement the books must show.
	for _, ty := range []postings.Kind{postings.KindDeposit, postings.KindCardFund, postings.KindCardTransferIn, postings.KindCardTransferOut,
		postings.KindCardAuth, postings.KindCardAuthRelease, postings.KindReversal, postings.KindCardSettle, postings.KindCardRefund,
		postings.KindFee, postings.KindRemitOut, postings.KindRemitReturn, postings.KindAdjustment, "RECEIVABLE", "RECEIVABLE_RECOVERY"} {
		if seen[string(ty)] == 0 {
			t.Errorf("the month has no %s line: %v", ty, seen)
		}
	}
	t.Logf("bill lines by type: %v", seen)
	gatewaytest.Verify(t, mo.l.Ledger)
}

// monthCategories is docs/finance.md's table of reporting categories,
// written out here rather than read from internal/bill, so that the report's
// categories are checked against the documented mapping, not against
// themselves.
var monthCategories = map[string]bill.Category{
	"CARD_FUND": "card_funding", "CARD_TRANSFER_IN": "card_funding", "CARD_TRANSFER_OUT": "card_funding",
	"CARD_CANCEL_REFUND": "card_funding", "CARD_SETTLE": "card_spend", "CARD_REFUND": "refunds", "FEE": "fees",
	"FEE_REFUND": "fees", "REMIT_OUT": "remittances", "REMIT_RETURN": "remittances", "REMIT_SETTLE": "remittances",
	"FX": "fx", "ADJUSTMENT": "adjustments", "DEPOSIT": "deposits", "CARD_AUTH": "holds", "CARD_AUTH_RELEASE": "holds",
	"REVERSAL": "holds", "RECEIVABLE": "receivables", "RECEIVABLE_RECOVERY": "receivables",
}

// classOf is the balance report's class of a bill line's account type.
func classOf(accountType string) string {
	switch accountType {
	case "FUNDING":
		return string(bill.ClassFunding)
	case "AVAILABLE":
		return string(bill.ClassCard)
	case "HELD":
		return string(bill.ClassHeld)
	case "RECEIVABLE":
		return string(bill.ClassReceivable)
	}
	return "unknown " + accountType
}

// statementTypes are the bill's accountType of the statement's accounts.
var statementTypes = map[postings.AccountType]string{postings.AccountFunding: "FUNDING", postings.AccountCardAvailable: "AVAILABLE",
	postings.AccountCardHeld: "HELD", postings.AccountCardReceivable: "RECEIVABLE"}

// billCSVIsJSON: the CSV download is the JSON, line for line, amount for
// amount (compared as decimals, not text).
func (mo *month) billCSVIsJSON(t *testing.T, srv *httptest.Server, sh *shopRec, lines []billLine) {
	t.Helper()
	recs := csvRecords(t, get(t, srv, sh, mo.billQuery(), true))
	if len(recs) != len(lines) {
		t.Fatalf("%s: the CSV has %d lines, the JSON %d", sh.m.ShopNo, len(recs), len(lines))
	}
	for i, r := range recs {
		j := lines[i]
		if r["billId"] != j.BillID || r["type"] != j.Type || r["account"] != j.Account || r["currency"] != j.Currency ||
			dec(t, r["amount"]).Cmp(dec(t, j.Amount.String())) != 0 || dec(t, r["balanceAfter"]).Cmp(dec(t, j.BalanceAfter.String())) != 0 {
			t.Errorf("%s line %d: CSV %v, JSON %+v", sh.m.ShopNo, i, r, j)
		}
	}
}

// accountName is the bill's name of a statement's account.
func accountName(a postings.Account) string {
	switch a.Type {
	case postings.AccountFunding:
		return "FUNDING"
	case postings.AccountCardHeld:
		return "HELD:" + a.Card
	case postings.AccountCardReceivable:
		return "RECEIVABLE:" + a.Card
	}
	return a.Card
}

func minorText(t *testing.T, minor int64, cur string) *apd.Decimal {
	t.Helper()
	return dec(t, postings.FormatMinor(minor, postings.MustCurrency(cur)))
}

// checkStatements: over the month, each account opens at zero, moves by
// its bill lines and closes at its balance; day by day, opening +
// movements = closing and each day opens where the last closed. It returns
// the month's closing per currency and report class, in minor units.
func (mo *month) checkStatements(t *testing.T, sh *shopRec, sums map[string]*apd.Decimal) map[string]int64 {
	t.Helper()
	ctx := context.Background()
	src := audit.New(mo.l.Ledger)
	accts, err := src.StatementAccounts(ctx, sh.m.ID, mo.start, mo.end)
	if err != nil {
		t.Fatal(err)
	}
	closing := map[string]int64{}
	if len(accts) != len(sums) {
		t.Errorf("%s: the statement has %d accounts, the bill %d", sh.m.ShopNo, len(accts), len(sums))
	}
	for _, a := range accts {
		k := a.Account.Currency + " " + accountName(a.Account)
		sum := sums[k]
		if sum == nil {
			sum = new(apd.Decimal)
		}
		if a.Opening != 0 || a.Opening+a.Moved != a.Closing || a.After != 0 || !a.HasBalance || a.Closing != a.Balance ||
			minorText(t, a.Moved, a.Account.Currency).Cmp(sum) != 0 {
			t.Errorf("%s %s: statement %+v, bill lines sum to %s", sh.m.ShopNo, k, a, sum)
		}
		closing[a.Account.Currency+" "+classOf(statementTypes[a.Account.Type])] += a.Closing
	}
	rep, err := reconcile.Statement(ctx, src, sh.m.ID, mo.start, mo.end)
	if err != nil || !rep.OK() {
		t.Errorf("%s: the month's statement does not reconcile: %v %+v", sh.m.ShopNo, err, rep)
	}
	prev := map[string]int64{}
	for day := mo.start; day.Before(mo.end); day = day.AddDate(0, 0, 1) {
		accts, err := src.StatementAccounts(ctx, sh.m.ID, day, day.AddDate(0, 0, 1))
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range accts {
			k := a.Account.Currency + " " + accountName(a.Account)
			if a.Opening != prev[k] || a.Opening+a.Moved != a.Closing {
				t.Errorf("%s %s %s: opening %d (the day before closed at %d) + %d ≠ closing %d", sh.m.ShopNo, day.Format(time.DateOnly), k,
					a.Opening, prev[k], a.Moved, a.Closing)
			}
			prev[k] = a.Closing
		}
	}
	return closing
}

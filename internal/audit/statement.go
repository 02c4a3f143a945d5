package audit

import (
	"context"
	"database/sql"
	"time"

	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// The reads behind reconciliation (package reconcile): a merchant's billable
// accounts over a period, and the CARD_SETTLE entries that a card network's
// settlement file is matched against. They only read.

// StatementAccount is one billable account of a merchant over a period
// [from, to), read from its bill lines and its balance in one snapshot.
type StatementAccount struct {
	Account postings.Account
	Opening int64 // balance_after of the account's last bill line before from; 0 without one
	Moved   int64 // the sum of the bill amounts in [from, to)
	Lines   int64 // the bill lines in [from, to)
	Closing int64 // balance_after of the account's last bill line before to; 0 without one
	After   int64 // the sum of the bill amounts at or after to
	Balance int64 // the balance now (balances.balance)
	// HasBalance is false when the account has no balance row.
	HasBalance bool
}

// StatementAccountsMax bounds the accounts StatementAccounts returns.
const StatementAccountsMax = 100_000

// StatementAccounts returns every billable account of merchant (each
// currency's funding account and each card's available balance, held
// funds and receivable) with its
// bill over [from, to), funding first then cards, by currency. It reads the
// merchant's whole bill once, in one statement (one snapshot). More than
// StatementAccountsMax accounts is ELIMIT.
func (a *Service) StatementAccounts(ctx context.Context, merchant int64, from, to time.Time) ([]StatementAccount, error) {
	if !from.Before(to) {
		return nil, postings.FieldErrorf("from", "must be before to")
	}
	var billable []string
	for _, t := range postings.AccountTypes() {
		if t.Billable() {
			billable = append(billable, string(t))
		}
	}
	// The last line before a time is the one with the highest bill_seq:
	// bill_seq is the commit order and a merchant's clock never goes back.
	var rows []struct {
		Type     string        `bun:"type"`
		Currency string        `bun:"currency"`
		CardNo   string        `bun:"card_no"`
		Opening  int64         `bun:"opening"`
		Moved    int64         `bun:"moved"`
		Lines    int64         `bun:"lines"`
		Closing  int64         `bun:"closing"`
		After    int64         `bun:"after"`
		Balance  sql.NullInt64 `bun:"balance"`
	}
	conn, err := a.l.ReadConn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	err = conn.NewRaw(statementAccountsSQL, merchant, from.UTC(), to.UTC(), pgdialect.Array(billable), StatementAccountsMax+1).Scan(ctx, &rows)
	if err != nil {
		return nil, ledger.MapError(err)
	}
	if len(rows) > StatementAccountsMax {
		return nil, postings.Errorf(postings.ELIMIT, "the merchant has more than %d billable accounts", StatementAccountsMax)
	}
	out := make([]StatementAccount, len(rows))
	for i, r := range rows {
		out[i] = StatementAccount{
			Account: postings.Account{Merchant: merchant, Type: postings.AccountType(r.Type), Currency: r.Currency, Card: r.CardNo},
			Opening: r.Opening, Moved: r.Moved, Lines: r.Lines, Closing: r.Closing, After: r.After,
			Balance: r.Balance.Int64, HasBalance: r.Balance.Valid,
		}
	}
	return out, nil
}

// statementAccountsSQL is StatementAccounts' statement (?0 the merchant, ?1
// from, ?2 to, ?3 the billable types, ?4 the limit): one aggregation over
// the merchant's accounts (each with its balance, a probe of balances_pkey)
// and its bill lines, grouped by account, with no join for the planner to
// choose: a join of the folded lines with the accounts would be planned
// from the statistics, and a nested loop over a rescanned fold is quadratic.
// The last line before a time is the one with the highest bill_seq
// (bill_seq is the commit order and a merchant's clock never goes back):
// max(array[bill_seq, balance_after]) compares the sequence first. Before
// an account's first line its balance is 0, or, for a held or receivable
// account that held funds when sql/0022 gave such accounts lines, what it
// held then (bill_openings, verify_position.go).
const statementAccountsSQL = `
	select max(m.type) as type, max(m.currency) as currency, coalesce(max(m.card_no), '') as card_no,
	       coalesce((max(array[m.bill_seq, m.balance_after]) filter (where m.created_at < ?1))[2], max(m.carried), 0) as opening,
	       coalesce(sum(m.amount) filter (where m.created_at >= ?1 and m.created_at < ?2), 0)::bigint as moved,
	       count(*) filter (where m.created_at >= ?1 and m.created_at < ?2) as lines,
	       coalesce((max(array[m.bill_seq, m.balance_after]) filter (where m.created_at < ?2))[2], max(m.carried), 0) as closing,
	       coalesce(sum(m.amount) filter (where m.created_at >= ?2), 0)::bigint as after,
	       max(m.balance) as balance
	from (
		select a.id as account_id, true as is_account, a.type, a.currency, a.card_no, b.balance, o.balance as carried,
		       null::bigint as bill_seq, null::timestamptz as created_at, null::bigint as amount, null::bigint as balance_after
		from accounts a
		left join lateral (select balance from balances where account_id = a.id offset 0) b on true
		left join lateral (select balance from bill_openings where account_id = a.id offset 0) o on true
		where a.merchant_id = ?0 and a.type = any(?3)
		union all
		select l.account_id, false, null, null, null, null, null, l.bill_seq, l.created_at, l.amount, l.balance_after
		from bill_lines l
		where l.merchant_id = ?0
	) m
	group by m.account_id
	having bool_or(m.is_account)
	order by max(m.currency), max(m.type) <> 'funding', max(m.card_no)
	limit ?4`

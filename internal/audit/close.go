package audit

import (
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/paygate/gateway/internal/audit/seal"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// A period close (issue 30 point 4, docs/audit.md#period-close) is one
// merchant's books at the end of a UTC day or month: the head then (the
// last entry created before the end) and the balance of every account the
// journal touched up to it, signed with the checkpoint key. The statement
// signed, after the purpose line PurposePeriodClose, is UTF-8 lines each
// ending in "\n":
//
//	merchant <id>
//	period <day|month> <YYYY-MM-DD|YYYY-MM>
//	end <the period's end, exclusive: Stamp>
//	closed_at <Stamp>
//	head <seq> <hash, 64 hex digits; 64 zeros before the first entry>
//	balance <account address> <balance in minor units>   one per account, addresses in byte order
type PeriodClose struct {
	Merchant  int64          `json:"merchant"`
	Kind      string         `json:"kind"`  // PeriodDay or PeriodMonth
	Start     string         `json:"start"` // 2026-11-26 or 2026-11
	End       Stamp          `json:"end"`
	ClosedAt  Stamp          `json:"closedAt"`
	HeadSeq   int64          `json:"headSeq"`
	HeadHash  string         `json:"headHash"`
	Balances  []CloseBalance `json:"balances"`
	KeyID     string         `json:"keyId"`
	Signature string         `json:"signature"`
}

// CloseBalance is one account's balance in a close.
type CloseBalance struct {
	Account string `json:"account"` // the address
	Balance int64  `json:"balance"`
}

// The kinds of period.
const (
	PeriodDay   = "day"
	PeriodMonth = "month"
)

// CheckPeriodClose names a close the journal no longer gives.
const CheckPeriodClose = "period_close"

// ParsePeriod reads a day (2026-11-26) or a month (2026-11) and returns
// the period's kind, canonical text, start and end (exclusive), in UTC.
func ParsePeriod(kind, text string) (start, end time.Time, err error) {
	switch kind {
	case PeriodDay:
		if start, err = time.Parse("2006-01-02", text); err == nil {
			return start, start.AddDate(0, 0, 1), nil
		}
	case PeriodMonth:
		if start, err = time.Parse("2006-01", text); err == nil {
			return start, start.AddDate(0, 1, 0), nil
		}
	default:
		return start, end, postings.FieldErrorf("period", "kind %q is neither day nor month", kind)
	}
	return start, end, postings.FieldErrorf(kind, "%q is not a %s (2026-11-26 or 2026-11)", text, kind)
}

// Statement is what the close's signature covers.
func (c *PeriodClose) Statement() []byte {
	b := fmt.Appendf(nil, "merchant %d\nperiod %s %s\nend %s\nclosed_at %s\nhead %d %s\n",
		c.Merchant, c.Kind, c.Start, c.End, c.ClosedAt, c.HeadSeq, c.HeadHash)
	for _, bal := range c.Balances {
		b = fmt.Appendf(b, "balance %s %d\n", bal.Account, bal.Balance)
	}
	return b
}

// closeHeadSQL is the merchant's last entry created before the end: the
// primary key read backwards from the newest entry, which stops at the
// first one before the end (created_at never decreases per merchant).
const closeHeadSQL = `select merchant_seq, hash from entries where merchant_id = ? and created_at < ?
	order by merchant_seq desc limit 1`

// closeBalancesSQL folds the merchant's postings up to the head into each
// account's balance: the accounts' identities, as the stream knows them.
const closeBalancesSQL = `
	select a.type, a.currency, coalesce(a.card_no, '') as card_no, s.balance
	from (select account_id, sum(delta) as balance from (
	        select destination_id as account_id, amount as delta from postings where merchant_id = ? and merchant_seq <= ?
	        union all
	        select source_id, -amount from postings where merchant_id = ? and merchant_seq <= ?) d
	      group by account_id) s
	cross join lateral (select type, currency, card_no from accounts where id = s.account_id offset 0) a`

// ClosePeriod closes merchant's period (kind PeriodDay or PeriodMonth,
// start as ParsePeriod reads it), signed by signer, and stores it. A
// period that has not ended yet, or that was closed already, is refused
// (ESTATE, ECONFLICT): nothing is back-dated, and a close is never redone.
func (s *Service) ClosePeriod(ctx context.Context, signer *Signer, merchant int64, kind, period string) (*PeriodClose, error) {
	start, end, err := ParsePeriod(kind, period)
	if err != nil {
		return nil, err
	}
	now := s.l.Now().UTC().Truncate(time.Microsecond)
	if now.Before(end) {
		return nil, postings.Errorf(postings.ESTATE, "the %s %s ends at %s: it can be closed only after it has ended",
			kind, period, end.Format(time.RFC3339))
	}
	c := &PeriodClose{Merchant: merchant, Kind: kind, Start: period, End: Stamp{end}, ClosedAt: Stamp{now}, KeyID: signer.KeyID()}
	if kind == PeriodDay {
		c.Start = start.Format("2006-01-02")
	} else {
		c.Start = start.Format("2006-01")
	}
	tx, err := s.l.DB().BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		return nil, ledger.MapError(err)
	}
	defer tx.Rollback() //nolint:errcheck // after Commit, a no-op
	// The merchant's head row, shared: a batch of this merchant still being
	// written holds it for update, so the close waits for it to commit and
	// then sees it — an entry created before the end cannot commit after
	// the close has read the journal.
	var locked int64
	if err := tx.NewRaw(`select merchant_id from ledger_heads where merchant_id = ? for share`, merchant).Scan(ctx, &locked); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, postings.Errorf(postings.ENOTFOUND, "merchant %d not found", merchant)
		}
		return nil, ledger.MapError(err)
	}
	var hash []byte
	err = tx.NewRaw(closeHeadSQL, merchant, end).Scan(ctx, &c.HeadSeq, &hash)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		hash = postings.GenesisHash[:]
	case err != nil:
		return nil, ledger.MapError(err)
	}
	c.HeadHash = hex.EncodeToString(hash)
	var rows []struct {
		Type     postings.AccountType `bun:"type"`
		Currency string               `bun:"currency"`
		Card     string               `bun:"card_no"`
		Balance  int64                `bun:"balance"`
	}
	if err := tx.NewRaw(closeBalancesSQL, merchant, c.HeadSeq, merchant, c.HeadSeq).Scan(ctx, &rows); err != nil {
		return nil, ledger.MapError(err)
	}
	for _, r := range rows {
		a := postings.Account{Merchant: merchant, Type: r.Type, Currency: r.Currency, Card: r.Card}
		c.Balances = append(c.Balances, CloseBalance{Account: a.Address(), Balance: r.Balance})
	}
	sortBalances(c.Balances)
	stmt := c.Statement()
	sig := signer.Sign(PurposePeriodClose, stmt)
	c.Signature = hex.EncodeToString(sig)
	bals, err := json.Marshal(c.Balances)
	if err != nil {
		return nil, err
	}
	if _, err := tx.NewRaw(`insert into audit_period_closes (merchant_id, period_kind, period_start, period_end, closed_at,
		head_seq, head_hash, balances, key_id, signed, signature) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		merchant, kind, start, end, now, c.HeadSeq, hash, string(bals), c.KeyID, seal.SignedMessage(PurposePeriodClose, stmt), sig).Exec(ctx); err != nil {
		if strings.Contains(err.Error(), "audit_period_closes_period_key") {
			return nil, postings.Errorf(postings.ECONFLICT, "the %s %s of merchant %d is closed already", kind, c.Start, merchant)
		}
		return nil, ledger.MapError(err)
	}
	return c, ledger.MapError(tx.Commit())
}

func sortBalances(b []CloseBalance) {
	slices.SortFunc(b, func(x, y CloseBalance) int { return strings.Compare(x.Account, y.Account) })
}

package ledger

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/paygate/gateway/postings"
)

// Remittance statuses. REJECTED is the gateway's own terminal state for a
// remittance stopped by screening; the spec's lifecycle ends in SETTLED or
// RETURNED (docs/remittances.md).
const (
	RemitSubmitted = "SUBMITTED"
	RemitScreening = "SCREENING"
	RemitInFlight  = "IN_FLIGHT"
	RemitSettled   = "SETTLED"
	RemitReturned  = "RETURNED"
	RemitRejected  = "REJECTED"
)

// EventRemittanceStatus is the outbox event of every status change.
const EventRemittanceStatus = "remittance.status"

// nextStatus is the forward-only lifecycle: the states each may move to.
var nextStatus = map[string][]string{
	RemitSubmitted: {RemitScreening},
	RemitScreening: {RemitInFlight, RemitRejected},
	RemitInFlight:  {RemitSettled, RemitReturned},
}

// RemittanceInput is a validated remittance request: the API validates the
// beneficiary and purpose against the corridor (rules.ValidateRemittance)
// and computes the fee and the rail before calling CreateRemittance.
type RemittanceInput struct {
	PayerID     string
	Beneficiary json.RawMessage // {name, country, bank_swift, account_no, …}
	Amount      int64           // minor units of Currency
	Fee         int64
	Currency    string
	Purpose     string
	Rail        string
	CallbackURL string
}

// RemittanceStep is one entry of a remittance's history.
type RemittanceStep struct {
	Status string    `json:"status"`
	Reason string    `json:"reason,omitempty"`
	At     time.Time `json:"at"`
}

// Remittance is a remittance with its history.
type Remittance struct {
	TxID        string           `json:"txId"`
	MerchantID  int64            `json:"merchantId"`
	PayerID     string           `json:"payerId"`
	Beneficiary json.RawMessage  `json:"beneficiary"`
	Amount      int64            `json:"amount"`
	Fee         int64            `json:"fee"`
	Currency    string           `json:"currency"`
	Purpose     string           `json:"purpose,omitempty"`
	Rail        string           `json:"rail"`
	Status      string           `json:"status"`
	Reason      string           `json:"reason,omitempty"`
	CallbackURL string           `json:"callbackUrl,omitempty"`
	CreatedAt   time.Time        `json:"createdAt"`
	UpdatedAt   time.Time        `json:"updatedAt"`
	SettledAt   *time.Time       `json:"settledAt,omitempty"`
	History     []RemittanceStep `json:"history"`
}

type remitRow struct {
	bun.BaseModel `bun:"table:remittances,alias:r"`
	TxID          string          `bun:"tx_id,pk"`
	MerchantID    int64           `bun:"merchant_id"`
	PayerID       string          `bun:"payer_id"`
	Beneficiary   json.RawMessage `bun:"beneficiary,type:jsonb"`
	Amount        int64           `bun:"amount"`
	Fee           int64           `bun:"fee"`
	Currency      string          `bun:"currency"`
	Purpose       sql.NullString  `bun:"purpose"`
	Rail          string          `bun:"rail"`
	Status        string          `bun:"status"`
	CallbackURL   sql.NullString  `bun:"callback_url"`
	Reason        sql.NullString  `bun:"reason"`
	NextActionAt  bun.NullTime    `bun:"next_action_at"`
	ClaimedUntil  bun.NullTime    `bun:"claimed_until"`
	CreatedAt     time.Time       `bun:"created_at"`
	UpdatedAt     time.Time       `bun:"updated_at"`
	SettledAt     bun.NullTime    `bun:"settled_at"`
}

type remitHistoryRow struct {
	bun.BaseModel `bun:"table:remittance_history"`
	TxID          string         `bun:"tx_id,pk"`
	Seq           int            `bun:"seq,pk"`
	Status        string         `bun:"status"`
	Reason        sql.NullString `bun:"reason"`
	At            time.Time      `bun:"at"`
}

type remitState struct {
	row     remitRow
	history int // steps so far
	isNew   bool
	dirty   bool
}

type remitExt struct {
	remits  map[string]*remitState
	absent  map[string]bool
	newRows []*remitState
	history []remitHistoryRow
}

type remitMark struct{ newRows, history int }

func (r *remitExt) init() {
	if r.remits == nil {
		r.remits, r.absent = map[string]*remitState{}, map[string]bool{}
	}
}

func (r *remitExt) mark() remitMark { return remitMark{len(r.newRows), len(r.history)} }

func (r *remitExt) rollback(m remitMark) {
	for _, s := range r.newRows[m.newRows:] {
		delete(r.remits, s.row.TxID)
	}
	r.newRows, r.history = r.newRows[:m.newRows], r.history[:m.history]
}

func (st *Tx) remitOf(merchant int64, txID string) (*remitState, error) {
	e := &st.ext.remit
	e.init()
	if s, ok := e.remits[txID]; ok {
		if s.row.MerchantID != merchant {
			return nil, errRemitNotFound()
		}
		return s, nil
	}
	if e.absent[txID] {
		return nil, errRemitNotFound()
	}
	var row remitRow
	err := st.idb.NewSelect().Model(&row).Where("tx_id = ?", txID).Scan(st.ctx)
	if errors.Is(err, sql.ErrNoRows) {
		e.absent[txID] = true
		return nil, errRemitNotFound()
	}
	if err != nil {
		return nil, MapError(err)
	}
	s := &remitState{row: row}
	if err := st.idb.NewRaw(`select count(*) from remittance_history where tx_id = ?`, txID).Scan(st.ctx, &s.history); err != nil {
		return nil, MapError(err)
	}
	e.remits[txID] = s
	if row.MerchantID != merchant {
		return nil, errRemitNotFound()
	}
	return s, nil
}

func errRemitNotFound() error {
	return postings.ReasonErrorf(postings.ENOTFOUND, postings.ReasonRemittance, "remittance not found")
}

// step records a status in the history, with an undo.
func (st *Tx) remitStep(s *remitState, status, reason string) {
	saved, savedDirty, savedHist := s.row, s.dirty, s.history
	st.undo = append(st.undo, func() { s.row, s.dirty, s.history = saved, savedDirty, savedHist })
	s.history++
	s.row.Status, s.row.UpdatedAt, s.dirty = status, st.now, true
	s.row.Reason = NullString(reason)
	s.row.ClaimedUntil = bun.NullTime{}
	st.ext.remit.history = append(st.ext.remit.history, remitHistoryRow{
		TxID: s.row.TxID, Seq: s.history, Status: status, Reason: NullString(reason), At: st.now,
	})
}

// flush queues the remittance rows. Remittances are rare next to card
// operations: their statements are bun's, rendered to text.
func (r *remitExt) flush(p *Pipeline) {
	if len(r.newRows) > 0 {
		rows := make([]remitRow, len(r.newRows))
		for i, s := range r.newRows {
			rows[i] = s.row
		}
		p.BunExec(p.db.NewInsert().Model(&rows), nil)
	}
	var changed []remitRow
	for _, s := range r.remits {
		if s.dirty && !s.isNew {
			changed = append(changed, s.row)
		}
	}
	if len(changed) > 0 {
		p.BunExec(p.db.NewUpdate().With("_data", p.db.NewValues(&changed)).
			Model((*remitRow)(nil)).TableExpr("_data").
			Set("status = _data.status").Set("reason = _data.reason").Set("next_action_at = _data.next_action_at").
			Set("claimed_until = _data.claimed_until").Set("updated_at = _data.updated_at").Set("settled_at = _data.settled_at").
			Where("r.tx_id = _data.tx_id"), RowsCheck(len(changed), "remittances"))
	}
	if len(r.history) > 0 {
		p.BunExec(p.db.NewInsert().Model(&r.history), nil)
	}
}

// CreateRemittance records a remittance in SUBMITTED and, in the same
// transaction, debits the funding account of its currency: REMIT_OUT (the
// amount, to remittance in flight) and FEE (the fee, to fee revenue).
// Errors: EFORBIDDEN "currency", ELIMIT "remittance_max", EINSUFFICIENT,
// ECONFLICT (idempotency).
func (l *Ledger) CreateRemittance(ctx context.Context, merchant int64, in RemittanceInput, idem *Idempotency) (*Remittance, error) {
	if in.Amount <= 0 || in.Amount > postings.AmountMinorMax || in.Fee < 0 || in.Fee > postings.AmountMinorMax {
		return nil, postings.FieldErrorf("amount", "must be greater than zero and at most the maximum amount")
	}
	cmd := &cardCmd{
		accounts: []postings.Account{postings.MerchantAccount(merchant, postings.AccountFunding, in.Currency)},
		fn: func(st *Tx, h *head) (any, error) {
			return st.createRemittance(h, in)
		},
	}
	return submitCard[Remittance](ctx, l, merchant, idem, in, cmd)
}

func (st *Tx) createRemittance(h *head, in RemittanceInput) (*Remittance, error) {
	m := &h.merchant
	if !m.HasCurrency(in.Currency) {
		return nil, postings.ReasonErrorf(postings.EFORBIDDEN, postings.ReasonCurrency, "%s is not one of the merchant's currencies", in.Currency)
	}
	lim, err := st.limit(m, in.Currency)
	if err != nil {
		return nil, err
	}
	if in.Amount > lim.RemittanceMax {
		cur := postings.MustCurrency(in.Currency)
		return nil, postings.ReasonErrorf(postings.ELIMIT, postings.ReasonRemittanceMax,
			"the amount exceeds the largest remittance of the merchant's KYB tier, %s %s", postings.FormatMinor(lim.RemittanceMax, cur), cur.Code)
	}
	fund := postings.MerchantAccount(m.ID, postings.AccountFunding, in.Currency)
	// Amount and fee are two entries: check them together, so that the
	// refusal tells the balance the merchant has, not the one left between
	// them (the entries check again as they post).
	bal, err := st.Balance(fund)
	if err != nil {
		return nil, err
	}
	if need := in.Amount + in.Fee; need > bal { // both at most AmountMinorMax: no overflow
		cur := postings.MustCurrency(in.Currency)
		return nil, &postings.Error{Code: postings.EINSUFFICIENT, Reason: postings.InsufficientReason(postings.AccountFunding),
			Message: fmt.Sprintf("insufficient funds: the funding account balance is %s %s, the remittance needs %s %s (amount plus fee)",
				postings.FormatMinor(bal, cur), cur.Code, postings.FormatMinor(need, cur), cur.Code)}
	}
	e := &st.ext.remit
	e.init()
	s := &remitState{isNew: true, row: remitRow{
		TxID: "rmt_" + RandomID(20), MerchantID: m.ID, PayerID: in.PayerID, Beneficiary: in.Beneficiary,
		Amount: in.Amount, Fee: in.Fee, Currency: in.Currency, Purpose: NullString(in.Purpose), Rail: in.Rail,
		Status: RemitSubmitted, CallbackURL: NullString(in.CallbackURL),
		NextActionAt: bun.NullTime{Time: st.now}, CreatedAt: st.now, UpdatedAt: st.now,
	}}
	e.remits[s.row.TxID] = s
	e.newRows = append(e.newRows, s)
	s.history = 1
	e.history = append(e.history, remitHistoryRow{TxID: s.row.TxID, Seq: 1, Status: RemitSubmitted, At: st.now})

	refs := postings.Refs{TxID: s.row.TxID}
	if _, err := st.Post(postings.Entry{Merchant: m.ID, Kind: postings.KindRemitOut, Refs: refs, Postings: []postings.Posting{{
		Source: fund, Destination: postings.MerchantAccount(m.ID, postings.AccountRemitInFlight, in.Currency),
		Amount: in.Amount, Currency: in.Currency}}}); err != nil {
		return nil, err
	}
	if in.Fee > 0 {
		if _, err := st.Post(postings.Entry{Merchant: m.ID, Kind: postings.KindFee, Refs: refs,
			Metadata: map[string]string{"fee": "remittance"}, Postings: []postings.Posting{{
				Source: fund, Destination: postings.MerchantAccount(m.ID, postings.AccountFeeRevenue, in.Currency),
				Amount: in.Fee, Currency: in.Currency}}}); err != nil {
			return nil, err
		}
	}
	return remitView(&s.row, []RemittanceStep{{Status: RemitSubmitted, At: st.now}}), nil
}

func remitView(r *remitRow, history []RemittanceStep) *Remittance {
	out := &Remittance{
		TxID: r.TxID, MerchantID: r.MerchantID, PayerID: r.PayerID, Beneficiary: r.Beneficiary, Amount: r.Amount,
		Fee: r.Fee, Currency: r.Currency, Purpose: r.Purpose.String, Rail: r.Rail, Status: r.Status,
		Reason: r.Reason.String, CallbackURL: r.CallbackURL.String, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(),
		History: history,
	}
	if !r.SettledAt.IsZero() {
		t := r.SettledAt.Time.UTC()
		out.SettledAt = &t
	}
	return out
}

// Remittance reads one of the merchant's remittances with its history;
// ENOTFOUND "remittance" for an unknown or another merchant's txId.
func (l *Ledger) Remittance(ctx context.Context, merchant int64, txID string) (*Remittance, error) {
	var row remitRow
	err := l.db.NewSelect().Model(&row).Where("tx_id = ? and merchant_id = ?", txID, merchant).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errRemitNotFound()
	}
	if err != nil {
		return nil, MapError(err)
	}
	var steps []RemittanceStep
	err = l.db.NewRaw(`select status, coalesce(reason, '') as reason, at from remittance_history where tx_id = ? order by seq`, txID).
		Scan(ctx, &steps)
	if err != nil {
		return nil, MapError(err)
	}
	for i := range steps {
		steps[i].At = steps[i].At.UTC()
	}
	return remitView(&row, steps), nil
}

// RemittanceTransition is one step of the lifecycle.
type RemittanceTransition struct {
	TxID   string
	From   string // the status the caller saw; the step is skipped if it changed
	To     string
	Reason string // ISO return reason (RETURNED) or why it was rejected
	// NextActionAt is when the worker may take the following step.
	NextActionAt time.Time
}

// TransitionRemittance moves a remittance one step forward, exactly once:
// under the merchant's lock the status must still be From and To must
// follow it. The money moves with it: SETTLED pays the rail (REMIT_SETTLE);
// RETURNED gives the amount back (REMIT_RETURN, the fee is kept: the rail
// did its work); REJECTED gives back the amount and the fee (REMIT_RETURN
// and FEE_REFUND). Each step records a remittance.status event. It returns
// the remittance and whether this call moved it.
func (l *Ledger) TransitionRemittance(ctx context.Context, merchant int64, t RemittanceTransition, idem *Idempotency) (*Remittance, bool, error) {
	type result struct {
		Remittance Remittance `json:"remittance"`
		Moved      bool       `json:"moved"`
	}
	cmd := &cardCmd{fn: func(st *Tx, h *head) (any, error) {
		s, err := st.remitOf(h.merchant.ID, t.TxID)
		if err != nil {
			return nil, err
		}
		if s.row.Status != t.From && t.From != "" {
			return &result{Remittance: *remitView(&s.row, nil)}, nil // someone else moved it
		}
		if !allowedStep(s.row.Status, t.To) {
			return nil, postings.ReasonErrorf(postings.ESTATE, postings.ReasonRemittanceState,
				"a %s remittance cannot become %s", s.row.Status, t.To)
		}
		if err := st.applyRemitStep(h, s, t); err != nil {
			return nil, err
		}
		return &result{Remittance: *remitView(&s.row, nil), Moved: true}, nil
	}}
	res, err := submitCard[result](ctx, l, merchant, idem, map[string]any{"op": "remit", "t": t}, cmd)
	if err != nil {
		return nil, false, err
	}
	return &res.Remittance, res.Moved, nil
}

func allowedStep(from, to string) bool {
	for _, s := range nextStatus[from] {
		if s == to {
			return true
		}
	}
	return false
}

func (st *Tx) applyRemitStep(h *head, s *remitState, t RemittanceTransition) error {
	r := &s.row
	from := r.Status
	m := h.merchant.ID
	refs := postings.Refs{TxID: r.TxID}
	inFlight := postings.MerchantAccount(m, postings.AccountRemitInFlight, r.Currency)
	fund := postings.MerchantAccount(m, postings.AccountFunding, r.Currency)
	var entries []postings.Entry
	switch t.To {
	case RemitSettled:
		entries = append(entries, postings.Entry{Merchant: m, Kind: postings.KindRemitSettle, Refs: refs, Postings: []postings.Posting{{
			Source: inFlight, Destination: postings.MerchantAccount(m, postings.AccountRailSettlement, r.Currency),
			Amount: r.Amount, Currency: r.Currency}}})
	case RemitReturned, RemitRejected:
		entries = append(entries, postings.Entry{Merchant: m, Kind: postings.KindRemitReturn, Refs: refs,
			Metadata: map[string]string{"reason": reasonCode(t.Reason)},
			Postings: []postings.Posting{{Source: inFlight, Destination: fund, Amount: r.Amount, Currency: r.Currency}}})
		if t.To == RemitRejected && r.Fee > 0 {
			entries = append(entries, postings.Entry{Merchant: m, Kind: postings.KindFeeRefund, Refs: refs, Postings: []postings.Posting{{
				Source: postings.MerchantAccount(m, postings.AccountFeeRevenue, r.Currency), Destination: fund,
				Amount: r.Fee, Currency: r.Currency}}})
		}
	}
	for _, e := range entries {
		if _, err := st.Post(e); err != nil {
			return err
		}
	}
	st.remitStep(s, t.To, t.Reason)
	switch t.To {
	case RemitSettled, RemitReturned, RemitRejected:
		r.NextActionAt = bun.NullTime{}
	default:
		r.NextActionAt = bun.NullTime{Time: t.NextActionAt}
	}
	if t.To == RemitSettled {
		r.SettledAt = bun.NullTime{Time: st.now}
	}
	return st.Emit(h.merchant.ID, Event{Type: EventRemittanceStatus, Subject: r.TxID, CallbackURL: r.CallbackURL.String, Data: remitEventData(r, from)})
}

// reasonCode keeps a reason inside the metadata character set.
func reasonCode(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s) && len(out) < 64; i++ {
		b := s[i]
		if (b >= 'A' && b <= 'Z') || (b >= 'a' && b <= 'z') || (b >= '0' && b <= '9') || b == '_' || b == '-' || b == '.' {
			out = append(out, b)
		} else if b == ' ' {
			out = append(out, '_')
		}
	}
	return string(out)
}

// remitEventData is the remittance of spec 2.5 as callbacks carry it, with
// its previous status.
func remitEventData(r *remitRow, previous string) map[string]any {
	cur := postings.MustCurrency(r.Currency)
	d := map[string]any{
		"txId": r.TxID, "status": r.Status, "previousStatus": previous,
		"amount": postings.Money{Minor: r.Amount, Currency: cur}, "currency": r.Currency,
		"fee": postings.Money{Minor: r.Fee, Currency: cur}, "rail": r.Rail,
	}
	if r.Reason.Valid {
		d["reason"] = r.Reason.String
	}
	if !r.SettledAt.IsZero() {
		d["settledAt"] = r.SettledAt.Time.UTC().Format(time.RFC3339)
	}
	return d
}

// DueRemittance is a remittance a worker claimed.
type DueRemittance struct {
	TxID        string          `bun:"tx_id"`
	MerchantID  int64           `bun:"merchant_id"`
	Status      string          `bun:"status"`
	Rail        string          `bun:"rail"`
	Beneficiary json.RawMessage `bun:"beneficiary"`
	NextAction  time.Time       `bun:"next_action_at"`
}

// ClaimDueRemittances claims up to limit remittances whose next step is
// due, for claim long: rows locked by another worker are skipped (SKIP
// LOCKED), and a claimed row is not claimed again until its claim ends. The
// claim only spreads the work; TransitionRemittance checks the status again
// under the merchant's lock, so a step happens once even if two workers
// hold the same row.
func (l *Ledger) ClaimDueRemittances(ctx context.Context, limit int, claim time.Duration) ([]DueRemittance, error) {
	now := l.now()
	var out []DueRemittance
	err := l.db.NewRaw(`
		update remittances r set claimed_until = ?
		from (
			select tx_id from remittances
			where next_action_at <= ? and (claimed_until is null or claimed_until < ?)
			order by next_action_at
			limit ?
			for update skip locked
		) due
		where r.tx_id = due.tx_id
		returning r.tx_id, r.merchant_id, r.status, r.rail, r.beneficiary, r.next_action_at`,
		now.Add(claim), now, now, limit).Scan(ctx, &out)
	return out, MapError(err)
}

// ReplaceSanctions replaces the sanctions list and returns its version.
func (l *Ledger) ReplaceSanctions(ctx context.Context, entries []SanctionsEntry) (int64, error) {
	var version int64
	err := l.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := tx.NewRaw(`select coalesce(max(version), 0) + 1 from sanctions_entries`).Scan(ctx, &version); err != nil {
			return err
		}
		const chunk = 5000
		for i := 0; i < len(entries); i += chunk {
			part := entries[i:min(i+chunk, len(entries))]
			names, countries, lists, refs := make([]string, len(part)), make([]string, len(part)), make([]string, len(part)), make([]string, len(part))
			for j, e := range part {
				names[j], countries[j], lists[j], refs[j] = e.Name, e.Country, e.List, e.Ref
			}
			_, err := tx.NewRaw(`
				insert into sanctions_entries (version, name, country, list, entry_ref)
				select ?, n, nullif(c, ''), nullif(l, ''), nullif(r, '') from unnest(?::text[], ?::text[], ?::text[], ?::text[]) as v(n, c, l, r)`,
				version, pgdialect.Array(names), pgdialect.Array(countries), pgdialect.Array(lists), pgdialect.Array(refs)).Exec(ctx)
			if err != nil {
				return err
			}
		}
		_, err := tx.NewRaw(`delete from sanctions_entries where version < ?`, version).Exec(ctx)
		return err
	})
	return version, MapError(err)
}

// SanctionsEntry is one line of the sanctions list.
type SanctionsEntry struct {
	Name    string `bun:"name"`
	Country string `bun:"country"`
	List    string `bun:"list"`
	Ref     string `bun:"entry_ref"`
}

// Sanctions returns the current list and its version (0: none loaded).
func (l *Ledger) Sanctions(ctx context.Context) ([]SanctionsEntry, int64, error) {
	var version int64
	if err := l.db.NewRaw(`select coalesce(max(version), 0) from sanctions_entries`).Scan(ctx, &version); err != nil {
		return nil, 0, MapError(err)
	}
	var out []SanctionsEntry
	err := l.db.NewRaw(`select name, coalesce(country, '') as country, coalesce(list, '') as list, coalesce(entry_ref, '') as entry_ref
		from sanctions_entries where version = ?`, version).Scan(ctx, &out)
	return out, version, MapError(err)
}

// SanctionsVersion is the version of the loaded list, cheap to poll.
func (l *Ledger) SanctionsVersion(ctx context.Context) (int64, error) {
	var version int64
	err := l.db.NewRaw(`select coalesce(max(version), 0) from sanctions_entries`).Scan(ctx, &version)
	return version, MapError(err)
}

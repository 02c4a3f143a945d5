package ledger

import (
	"database/sql"
	"encoding/json"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// extState holds the rows of the merchants' domain tables that a batch reads
// and writes beside the journal: cards, outbox events and the daily
// card-issuing counters. Like the journal rows, they are changed in memory
// (with an undo for each change, so a failed command leaves no trace) and
// written by flush in a few statements for the whole batch.
type extState struct {
	cards      map[string]*cardState // by card number, loaded or new
	cardAbsent map[string]bool       // looked up and not found
	newCards   []*cardState
	outbox     []eventRow
	deliveries []deliveryRow
	issued     map[issueKey]*issueState
	network    networkExt
	remit      remitExt
	// Read-only configuration cached for the batch: limits and FX rates
	// are read once per batch, not once per command (an operator's change
	// applies from the next batch).
	limits map[string]*Limit
	rates  map[string]*fxRateRow
	bins   map[string]*binAccessRow
}

type extMark struct {
	newCards, events, deliveries int
	network                      networkMark
	remit                        remitMark
}

// extPrefetch names the domain rows a batch will read.
type extPrefetch struct {
	cards []string
	auths []string
}

func (p *extPrefetch) auth(authID string) { p.auths = append(p.auths, authID) }

func (p *extPrefetch) card(cardNo string) { p.cards = append(p.cards, cardNo) }

type cardState struct {
	row   cardRow
	isNew bool
	dirty bool
}

type issueKey struct {
	merchant int64
	currency string
	day      string // YYYY-MM-DD, UTC
}

type issueState struct {
	issued int64
	dirty  bool
}

func (e *extState) init() {
	if e.cards == nil {
		e.cards = map[string]*cardState{}
		e.cardAbsent = map[string]bool{}
		e.issued = map[issueKey]*issueState{}
	}
}

func (e *extState) mark() extMark {
	return extMark{len(e.newCards), len(e.outbox), len(e.deliveries), e.network.mark(), e.remit.mark()}
}

// rollback drops what a failed command added; changes to loaded rows are
// undone by the state's undo closures.
func (e *extState) rollback(m extMark) {
	for _, c := range e.newCards[m.newCards:] {
		delete(e.cards, c.row.CardNo)
	}
	e.newCards = e.newCards[:m.newCards]
	e.outbox = e.outbox[:m.events]
	e.deliveries = e.deliveries[:m.deliveries]
	e.network.rollback(m.network)
	e.remit.rollback(m.remit)
}

// events counts the outbox events of the batch.
func (e *extState) events() int { return len(e.outbox) }

func (e *extState) load(st *state, p *extPrefetch) error {
	e.init()
	if err := st.loadAuths(p.auths); err != nil {
		return err
	}
	return st.loadCards(p.cards)
}

// loadCards reads cards by number into the batch. Cards of every merchant
// are loaded; commands check ownership.
func (st *state) loadCards(cardNos []string) error {
	e := &st.ext
	e.init()
	var want []string
	for _, c := range cardNos {
		if _, ok := e.cards[c]; !ok && !e.cardAbsent[c] {
			want = append(want, c)
		}
	}
	if len(want) == 0 {
		return nil
	}
	var rows []cardRow
	if err := st.tx.NewSelect().Model(&rows).Where("card_no = any(?)", pgdialect.Array(want)).Scan(st.ctx); err != nil {
		return mapError(err)
	}
	for i := range rows {
		e.cards[rows[i].CardNo] = &cardState{row: rows[i]}
	}
	for _, c := range want {
		if _, ok := e.cards[c]; !ok {
			e.cardAbsent[c] = true
		}
	}
	return nil
}

// cardOf returns the merchant's card, or ENOTFOUND "card" when it does not
// exist or is another merchant's: the two answers are the same.
func (st *state) cardOf(merchant int64, cardNo string) (*cardState, error) {
	if err := st.loadCards([]string{cardNo}); err != nil {
		return nil, err
	}
	c := st.ext.cards[cardNo]
	if c == nil || c.row.MerchantID != merchant {
		return nil, errCardNotFound()
	}
	return c, nil
}

// changeCard applies fn to a card's row, with an undo.
func (st *state) changeCard(c *cardState, fn func(r *cardRow)) {
	saved, savedDirty := c.row, c.dirty
	st.undo = append(st.undo, func() { c.row, c.dirty = saved, savedDirty })
	fn(&c.row)
	c.row.UpdatedAt = st.now
	c.dirty = true
}

func (st *state) addCard(r cardRow) *cardState {
	st.ext.init()
	c := &cardState{row: r, isNew: true}
	st.ext.cards[r.CardNo] = c
	delete(st.ext.cardAbsent, r.CardNo)
	st.ext.newCards = append(st.ext.newCards, c)
	return c
}

// issuedToday returns the day's card-issuing counter of a merchant and
// currency, loading it on first use.
func (st *state) issuedToday(merchant int64, currency string) (*issueState, error) {
	st.ext.init()
	k := issueKey{merchant, currency, st.now.UTC().Format("2006-01-02")}
	if s, ok := st.ext.issued[k]; ok {
		return s, nil
	}
	var issued int64
	err := st.tx.NewRaw(`select issued from card_issue_daily where merchant_id = ? and currency = ? and day = ?::date`,
		k.merchant, k.currency, k.day).Scan(st.ctx, &issued)
	if err != nil && err != sql.ErrNoRows {
		return nil, mapError(err)
	}
	s := &issueState{issued: issued}
	st.ext.issued[k] = s
	return s, nil
}

func (st *state) addIssued(s *issueState, amount int64) {
	saved, savedDirty := s.issued, s.dirty
	st.undo = append(st.undo, func() { s.issued, s.dirty = saved, savedDirty })
	s.issued += amount
	s.dirty = true
}

// Event types written to the outbox (docs/callbacks.md).
const (
	EventCardCreated   = "card.created"
	EventCardFrozen    = "card.frozen"
	EventCardUnfrozen  = "card.unfrozen"
	EventCardCancelled = "card.cancelled"
)

// EventPayload is the JSON body of a callback, final when the event is
// written: a retry sends the same bytes (with a fresh signature).
type EventPayload struct {
	EventID   string          `json:"event_id"`
	EventType string          `json:"event_type"`
	CreatedAt string          `json:"created_at"`
	ShopNo    string          `json:"shopNo"`
	Sequence  int64           `json:"sequence"`
	Data      json.RawMessage `json:"data"`
}

// event appends an outbox event for the head's merchant.
func (st *state) event(h *head, eventType, subject, callbackURL string, data any) error {
	raw, err := json.Marshal(data)
	if err != nil {
		return err
	}
	st.touchHead(h)
	h.eventSeq++
	p := EventPayload{
		EventID: "evt_" + randomID(24), EventType: eventType, CreatedAt: st.now.UTC().Format(time.RFC3339),
		ShopNo: h.merchant.ShopNo, Sequence: h.eventSeq, Data: raw,
	}
	body, err := json.Marshal(p)
	if err != nil {
		return err
	}
	st.ext.outbox = append(st.ext.outbox, eventRow{
		MerchantID: h.merchant.ID, EventSeq: h.eventSeq, EventID: p.EventID, EventType: eventType,
		Subject: subject, Payload: body, CallbackURL: nullString(callbackURL), CreatedAt: st.now,
	})
	if target := deliveryTarget(eventType, callbackURL, h.merchant.CallbackURL); target != "" {
		st.ext.deliveries = append(st.ext.deliveries, deliveryRow{
			MerchantID: h.merchant.ID, EventSeq: h.eventSeq, Subject: subject, URL: target, Status: DeliveryPending,
			WindowStart: st.now, NextAttemptAt: bun.NullTime{Time: st.now},
		})
	}
	return nil
}

// deliveryTarget is where an event is sent (docs/callbacks.md): the URL the
// request that caused it gave, else the merchant's configured URL — except
// card.created, which the spec sends only to the create request's URL.
func deliveryTarget(eventType, requestURL, merchantURL string) string {
	switch {
	case requestURL != "":
		return requestURL
	case eventType == EventCardCreated:
		return ""
	default:
		return merchantURL
	}
}

func (e *extState) flush(st *state) error {
	if err := e.flushCards(st); err != nil {
		return err
	}
	if err := e.flushIssued(st); err != nil {
		return err
	}
	if err := e.network.flush(st); err != nil {
		return err
	}
	if err := e.remit.flush(st); err != nil {
		return err
	}
	if len(e.outbox) > 0 {
		if _, err := st.tx.NewInsert().Model(&e.outbox).Exec(st.ctx); err != nil {
			return mapError(err)
		}
	}
	if len(e.deliveries) > 0 {
		if _, err := st.tx.NewInsert().Model(&e.deliveries).Exec(st.ctx); err != nil {
			return mapError(err)
		}
	}
	return nil
}

func (e *extState) flushCards(st *state) error {
	if len(e.newCards) > 0 {
		rows := make([]cardRow, len(e.newCards))
		for i, c := range e.newCards {
			rows[i] = c.row
		}
		if _, err := st.tx.NewInsert().Model(&rows).Exec(st.ctx); err != nil {
			return mapError(err)
		}
	}
	var changed []cardRow
	for _, c := range e.cards {
		if c.dirty && !c.isNew {
			changed = append(changed, c.row)
		}
	}
	if len(changed) == 0 {
		return nil
	}
	res, err := st.tx.NewUpdate().With("_data", st.tx.NewValues(&changed)).
		Model((*cardRow)(nil)).TableExpr("_data").
		Set("status = _data.status").Set("freeze_reason = _data.freeze_reason").
		Set("updated_at = _data.updated_at").Set("cancelled_at = _data.cancelled_at").
		Where("c.card_no = _data.card_no").Exec(st.ctx)
	if err != nil {
		return mapError(err)
	}
	if n, _ := res.RowsAffected(); n != int64(len(changed)) {
		return errInvariant("%d cards updated, %d expected", n, len(changed))
	}
	return nil
}

func (e *extState) flushIssued(st *state) error {
	var ms, amounts []int64
	var curs, days []string
	for k, s := range e.issued {
		if s.dirty {
			ms, curs, days, amounts = append(ms, k.merchant), append(curs, k.currency), append(days, k.day), append(amounts, s.issued)
		}
	}
	if len(ms) == 0 {
		return nil
	}
	_, err := st.tx.NewRaw(`
		insert into card_issue_daily (merchant_id, currency, day, issued)
		select * from unnest(?::bigint[], ?::text[], ?::date[], ?::bigint[])
		on conflict (merchant_id, currency, day) do update set issued = excluded.issued`,
		pgdialect.Array(ms), pgdialect.Array(curs), pgdialect.Array(days), pgdialect.Array(amounts)).Exec(st.ctx)
	return mapError(err)
}

type cardRow struct {
	bun.BaseModel  `bun:"table:cards,alias:c"`
	CardNo         string         `bun:"card_no,pk"`
	MerchantID     int64          `bun:"merchant_id"`
	Bin            string         `bun:"bin"`
	Currency       string         `bun:"currency"`
	Network        string         `bun:"network"`
	Last4          string         `bun:"last4"`
	ExpiryMonth    int            `bun:"expiry_month"`
	ExpiryYear     int            `bun:"expiry_year"`
	PanSealed      []byte         `bun:"pan_sealed"`
	PanFingerprint []byte         `bun:"pan_fingerprint"`
	Status         string         `bun:"status"`
	FreezeReason   sql.NullString `bun:"freeze_reason"`
	Remark         sql.NullString `bun:"remark"`
	CallbackURL    sql.NullString `bun:"callback_url"`
	CreatedAt      time.Time      `bun:"created_at"`
	UpdatedAt      time.Time      `bun:"updated_at"`
	CancelledAt    bun.NullTime   `bun:"cancelled_at"`
}

type eventRow struct {
	bun.BaseModel `bun:"table:events"`
	MerchantID    int64           `bun:"merchant_id,pk"`
	EventSeq      int64           `bun:"event_seq,pk"`
	EventID       string          `bun:"event_id"`
	EventType     string          `bun:"event_type"`
	Subject       string          `bun:"subject"`
	Payload       json.RawMessage `bun:"payload,type:jsonb"`
	CallbackURL   sql.NullString  `bun:"callback_url"`
	CreatedAt     time.Time       `bun:"created_at"`
}

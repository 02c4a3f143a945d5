package cards

import (
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paygate/gateway/internal/database"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// batch is the card domain's rows in one batch transaction: cards, the
// daily card-load counters, the BIN access of the batch's card creations
// and the merchants' limits. Like the journal rows they are changed in
// memory, each change with a ledger Undo, and written by Flush in a few
// statements for the whole batch.
type batch struct {
	cards      map[string]*BatchCard // by card number, loaded or new
	cardAbsent map[string]bool       // looked up and not found
	// accountsRead are the cards whose accounts are all in the batch's
	// accounts: read with the card, or the card is new in this batch
	// (KnowsAccounts).
	accountsRead map[string]bool
	newCards     []*BatchCard
	issued       map[issueKey]*issueState
	bins         map[binKey]*binAccessRow // nil: no such entry
	// Limits are read once per batch (an operator's change applies from
	// the next batch): the merchant_limits rows of the batch's merchants
	// with the head lock (Begin), by "merchant:currency", and the limits
	// computed from them.
	limits     map[string]*Limit
	limitsRead map[int64]bool
	limitRows  map[string]*limitRow
	// tiers are the KYB tiers of the batch's merchants, read with their
	// limits (a tier's defaults stand for a currency without a row).
	tiers map[int64]string
	// merchants are the batch's merchants (Begin), whose issuing counters
	// a missing one is read with (issuedToday).
	merchants []int64

	// What the commands named before the batch began (Load reads it).
	wantCards []string
	// wantBins are card creations' BINs: their access and the merchant's
	// issuing counter are read with the batch's other rows, not one round
	// trip each on the hot merchant's serial path.
	wantBins []binKey
	// wantLoads are the day's card-load counters of the top-ups
	// (merchant and currency; the day is the batch's).
	wantLoads []issueKey
}

var batchOf = ledger.NewState(func() *batch {
	return &batch{
		cards: map[string]*BatchCard{}, cardAbsent: map[string]bool{}, accountsRead: map[string]bool{},
		issued: map[issueKey]*issueState{},
		bins:   map[binKey]*binAccessRow{}, limits: map[string]*Limit{}, limitsRead: map[int64]bool{},
		limitRows: map[string]*limitRow{}, tiers: map[int64]string{},
	}
})

// BatchCard is a card as a batch transaction sees it (the network domain
// works on them too).
type BatchCard struct {
	row   cardRow
	isNew bool
	dirty bool
	// merchantActive is whether the card's merchant was ACTIVE when the
	// batch read the card (a card made in the batch: its merchant acts).
	merchantActive bool
}

// MerchantActive reports whether the card's merchant is active: a disabled
// merchant's cards are declined (docs/network.md).
func (c *BatchCard) MerchantActive() bool { return c.isNew || c.merchantActive }

// No is the card number.
func (c *BatchCard) No() string { return c.row.CardNo }

// MerchantID is the card's merchant.
func (c *BatchCard) MerchantID() int64 { return c.row.MerchantID }

// Currency is the card's currency.
func (c *BatchCard) Currency() string { return c.row.Currency }

// Status is ACTIVE, FROZEN or CANCELLED.
func (c *BatchCard) Status() string { return c.row.Status }

// Expired reports whether the card's expiry month has ended at now.
func (c *BatchCard) Expired(now time.Time) bool {
	end := time.Date(c.row.ExpiryYear, time.Month(c.row.ExpiryMonth)+1, 1, 0, 0, 0, 0, time.UTC)
	return !now.Before(end)
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

// day is the batch's UTC day, YYYY-MM-DD: the issuing counters' key.
func day(tx *ledger.Tx) string { return tx.Now().UTC().Format("2006-01-02") }

// WantCard names a card a command will read, with all its accounts, before
// the batch begins (ledger.Command.Prefetch).
func WantCard(tx *ledger.Tx, cardNo string) {
	b := batchOf.Of(tx)
	b.wantCards = append(b.wantCards, cardNo)
}

// Begin implements ledger.Beginner: the limits of the batch's merchants.
func (b *batch) Begin(tx *ledger.Tx, p *ledger.Pipeline, merchants []int64) {
	b.merchants = merchants
	b.queueLimits(p, merchants)
}

// Load implements ledger.Loader.
func (b *batch) Load(tx *ledger.Tx, p *ledger.Pipeline) {
	b.queueCards(tx, p, b.wantCards)
	b.queueBins(tx, p, b.wantBins)
	if len(b.wantLoads) > 0 {
		d := day(tx)
		for i := range b.wantLoads {
			b.wantLoads[i].day = d
		}
		b.queueIssued(tx, p, b.wantLoads)
	}
}

// The merchant's status comes with each card (one probe of the merchants'
// primary key per card, no round trip of its own): a disabled merchant's
// cards are declined by the network domain (MerchantActive). The probe's
// SQL is internal/merchant's, the owner of the table.
var stmtLoadCards = ledger.NewStmt(`select c.*, m.status = 'ACTIVE' from unnest($1::text[]) as v(card_no)
	cross join lateral (select ` + cardColumns + ` from cards c where c.card_no = v.card_no offset 0) c
	cross join lateral ` + merchant.Probe(merchant.ProbeStatus, "c.merchant_id") + ` m`)

// queueCards queues the read of cards by number, with all their accounts.
// Cards of every merchant are read; commands check ownership.
func (b *batch) queueCards(tx *ledger.Tx, p *ledger.Pipeline, cardNos []string) {
	var want []string
	for _, c := range cardNos {
		if _, ok := b.cards[c]; !ok && !b.cardAbsent[c] {
			want = append(want, c)
		}
	}
	if len(want) == 0 {
		return
	}
	// One probe per element: no element twice.
	want = ledger.UniqueSorted(want)
	p.Query(stmtLoadCards, func(rows pgx.Rows) error {
		for rows.Next() {
			var r cardRow
			var active bool
			if err := r.scan(rows, &active); err != nil {
				return err
			}
			b.cards[r.CardNo] = &BatchCard{row: r, merchantActive: active}
		}
		for _, c := range want {
			if _, ok := b.cards[c]; !ok {
				b.cardAbsent[c] = true
			}
		}
		return nil
	}, want)
	b.queueCardAccounts(tx, p, want)
}

// stmtLoadCardAccounts reads every account of the given cards: a card's
// accounts cannot be named before the card is read (their currency is the
// card's), so they are read with it, in the same pipeline, and handed to
// the journal's batch (ledger.Tx.ScanAccounts).
var stmtLoadCardAccounts = ledger.NewStmt(`
	select a.id, a.merchant_id, a.type, a.currency, a.card_no, b.balance, b.last_seq
	from unnest($1::text[]) as v(card_no)
	cross join lateral (select * from accounts a where a.card_no = v.card_no offset 0) a
	cross join lateral (select b.balance, b.last_seq from balances b where b.account_id = a.id offset 0) b`)

// queueCardAccounts queues the read of every account of the cards whose
// accounts the batch does not hold yet.
func (b *batch) queueCardAccounts(tx *ledger.Tx, p *ledger.Pipeline, cardNos []string) {
	var want []string
	for _, c := range cardNos {
		if !b.accountsRead[c] {
			want = append(want, c)
		}
	}
	if len(want) == 0 {
		return
	}
	// One probe per element: no element twice.
	want = ledger.UniqueSorted(want)
	p.Query(stmtLoadCardAccounts, func(rows pgx.Rows) error {
		if err := tx.ScanAccounts(rows); err != nil {
			return err
		}
		for _, c := range want {
			b.accountsRead[c] = true
		}
		return nil
	}, want)
}

// KnowsAccounts implements ledger.AccountKnower: the batch holds every
// account of a card whose accounts were read, or that it created.
func (b *batch) KnowsAccounts(a postings.Account) bool {
	return a.Card != "" && b.accountsRead[a.Card]
}

// Load reads cards by number into the batch (those it does not hold yet).
func Load(tx *ledger.Tx, cardNos []string) error {
	p := tx.Pipeline()
	batchOf.Of(tx).queueCards(tx, p, cardNos)
	return p.Send()
}

// Loaded returns a card the batch holds, or nil.
func Loaded(tx *ledger.Tx, cardNo string) *BatchCard { return batchOf.Of(tx).cards[cardNo] }

// CardOf returns the merchant's card, or ENOTFOUND "card" when it does not
// exist or is another merchant's: the two answers are the same.
func CardOf(tx *ledger.Tx, merchant int64, cardNo string) (*BatchCard, error) {
	if err := Load(tx, []string{cardNo}); err != nil {
		return nil, err
	}
	c := Loaded(tx, cardNo)
	if c == nil || c.row.MerchantID != merchant {
		return nil, errCardNotFound()
	}
	return c, nil
}

// change applies fn to a card's row, with an undo.
func change(tx *ledger.Tx, c *BatchCard, fn func(r *cardRow)) {
	saved, savedDirty := c.row, c.dirty
	tx.Undo(func() { c.row, c.dirty = saved, savedDirty })
	fn(&c.row)
	c.row.UpdatedAt = tx.Now()
	c.dirty = true
}

// add puts a new card into the batch, with an undo.
func (b *batch) add(tx *ledger.Tx, r cardRow) *BatchCard {
	c := &BatchCard{row: r, isNew: true}
	n := len(b.newCards)
	b.cards[r.CardNo] = c
	delete(b.cardAbsent, r.CardNo)
	b.accountsRead[r.CardNo] = true // a new card has no accounts yet
	b.newCards = append(b.newCards, c)
	tx.Undo(func() {
		delete(b.cards, r.CardNo)
		b.newCards = b.newCards[:n]
	})
	return c
}

// Flush implements ledger.Flusher.
func (b *batch) Flush(p *ledger.Pipeline) {
	b.flushCards(p)
	b.flushIssued(p)
}

var stmtInsertCards = ledger.NewStmt(`
	insert into cards (` + cardColumns + `)
	select * from unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::smallint[],
	                     $8::smallint[], $9::bytea[], $10::bytea[], $11::text[], $12::text[], $13::text[], $14::text[],
	                     $15::timestamptz[], $16::timestamptz[], $17::timestamptz[])`)

var stmtUpdateCards = ledger.NewStmt(`
	update cards c set status = v.status, freeze_reason = v.reason, updated_at = v.updated, cancelled_at = v.cancelled
	from unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[], $5::timestamptz[])
	     as v(card_no, status, reason, updated, cancelled)
	cross join lateral (select ctid from cards x where x.card_no = v.card_no offset 0) x
	where c.ctid = x.ctid`)

func (b *batch) flushCards(p *ledger.Pipeline) {
	if n := len(b.newCards); n > 0 {
		var (
			nos, bins, curs, nets, last4s, statuses = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
			ms                                      = make([]int64, n)
			months, years                           = make([]int16, n), make([]int16, n)
			sealed, fps                             = make([][]byte, n), make([][]byte, n)
			reasons, remarks, urls                  = make([]*string, n), make([]*string, n), make([]*string, n)
			created, updated                        = make([]time.Time, n), make([]time.Time, n)
			cancelled                               = make([]*time.Time, n)
		)
		for i, c := range b.newCards {
			r := &c.row
			nos[i], ms[i], bins[i], curs[i], nets[i], last4s[i] = r.CardNo, r.MerchantID, r.Bin, r.Currency, r.Network, r.Last4
			months[i], years[i], sealed[i], fps[i], statuses[i] = int16(r.ExpiryMonth), int16(r.ExpiryYear), r.PanSealed, r.PanFingerprint, r.Status
			reasons[i], remarks[i], urls[i] = database.NullText(r.FreezeReason), database.NullText(r.Remark), database.NullText(r.CallbackURL)
			created[i], updated[i], cancelled[i] = r.CreatedAt, r.UpdatedAt, database.NullTime(r.CancelledAt)
		}
		p.ExecRows(stmtInsertCards, n, "cards", nos, ms, bins, curs, nets, last4s, months, years, sealed, fps, statuses,
			reasons, remarks, urls, created, updated, cancelled)
	}
	var nos, statuses []string
	var reasons []*string
	var updated []time.Time
	var cancelled []*time.Time
	for _, c := range b.cards {
		if c.dirty && !c.isNew {
			nos, statuses = append(nos, c.row.CardNo), append(statuses, c.row.Status)
			reasons, updated = append(reasons, database.NullText(c.row.FreezeReason)), append(updated, c.row.UpdatedAt)
			cancelled = append(cancelled, database.NullTime(c.row.CancelledAt))
		}
	}
	if len(nos) > 0 {
		p.ExecRows(stmtUpdateCards, len(nos), "cards", nos, statuses, reasons, updated, cancelled)
	}
}

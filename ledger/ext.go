package ledger

import (
	"database/sql"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/uptrace/bun"
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
	issued     map[issueKey]*issueState
	network    networkExt
	remit      remitExt
	// Read-only configuration cached for the batch: limits and FX rates
	// are read once per batch, not once per command (an operator's change
	// applies from the next batch).
	limits map[string]*Limit
	// The merchant_limits rows of the batch's merchants, read with the
	// head lock (limitsRead), by "merchant:currency".
	limitsRead map[int64]bool
	limitRows  map[string]*limitRow
	rates      map[string]*fxRateRow
	bins       map[binKey]*binAccessRow // nil: no such entry
}

type extMark struct {
	newCards int
	network  networkMark
	remit    remitMark
}

// extPrefetch names the domain rows a batch will read.
type extPrefetch struct {
	cards []string
	auths []string
	// bins are card creations' BINs: their access and the merchant's
	// issuing counter are read with the batch's other rows, not one round
	// trip each on the hot merchant's serial path.
	bins []binKey
	// loads are the day's card-load counters (merchant and currency; the
	// day is the batch's) of the top-ups: read with the batch's rows too.
	loads []issueKey
}

// binKey is a merchant's BIN entry (a BIN in a currency).
type binKey struct {
	merchant      int64
	bin, currency string
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
	return extMark{len(e.newCards), e.network.mark(), e.remit.mark()}
}

// rollback drops what a failed command added; changes to loaded rows are
// undone by the state's undo closures.
func (e *extState) rollback(m extMark) {
	for _, c := range e.newCards[m.newCards:] {
		delete(e.cards, c.row.CardNo)
	}
	e.newCards = e.newCards[:m.newCards]
	e.network.rollback(m.network)
	e.remit.rollback(m.remit)
}

// queueLoad queues the reads of the prefetched domain rows.
func (e *extState) queueLoad(st *Tx, p *Pipeline, pf *extPrefetch) {
	e.init()
	st.queueAuths(p, pf.auths)
	st.queueCards(p, pf.cards)
	st.queueBins(p, pf.bins)
	if len(pf.loads) > 0 {
		day := st.day()
		for i := range pf.loads {
			pf.loads[i].day = day
		}
		st.queueIssued(p, pf.loads)
	}
}

// cardColumns are the columns of cardRow, in its field order.
const cardColumns = `card_no, merchant_id, bin, currency, network, last4, expiry_month, expiry_year,
	pan_sealed, pan_fingerprint, status, freeze_reason, remark, callback_url, created_at, updated_at, cancelled_at`

// cardColumnsOf is cardColumns qualified with a table alias.
func cardColumnsOf(alias string) string {
	cols := strings.Split(cardColumns, ",")
	for i, c := range cols {
		cols[i] = alias + "." + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}

var stmtLoadCards = NewStmt(`select c.* from unnest($1::text[]) as v(card_no)
	cross join lateral (select ` + cardColumns + ` from cards c where c.card_no = v.card_no offset 0) c`)

// scan reads the card columns of a row, then extra columns into more.
func (r *cardRow) scan(rows pgx.Rows, more ...any) error {
	var cancelled *time.Time
	dest := append([]any{&r.CardNo, &r.MerchantID, &r.Bin, &r.Currency, &r.Network, &r.Last4, &r.ExpiryMonth, &r.ExpiryYear,
		&r.PanSealed, &r.PanFingerprint, &r.Status, &r.FreezeReason, &r.Remark, &r.CallbackURL,
		&r.CreatedAt, &r.UpdatedAt, &cancelled}, more...)
	err := rows.Scan(dest...)
	if cancelled != nil {
		r.CancelledAt = bun.NullTime{Time: *cancelled}
	}
	return err
}

// queueCards queues the read of cards by number, with all their accounts.
// Cards of every merchant are read; commands check ownership.
func (st *Tx) queueCards(p *Pipeline, cardNos []string) {
	e := &st.ext
	e.init()
	var want []string
	for _, c := range cardNos {
		if _, ok := e.cards[c]; !ok && !e.cardAbsent[c] {
			want = append(want, c)
		}
	}
	if len(want) == 0 {
		return
	}
	// One probe per element: no element twice.
	want = UniqueSorted(want)
	p.Query(stmtLoadCards, func(rows pgx.Rows) error {
		for rows.Next() {
			var r cardRow
			if err := r.scan(rows); err != nil {
				return err
			}
			e.cards[r.CardNo] = &cardState{row: r}
		}
		for _, c := range want {
			if _, ok := e.cards[c]; !ok {
				e.cardAbsent[c] = true
			}
		}
		return nil
	}, want)
	st.QueueCardAccounts(p, want)
}

// loadCards reads cards by number into the batch.
func (st *Tx) loadCards(cardNos []string) error {
	p := st.Pipeline()
	st.queueCards(p, cardNos)
	return p.Send()
}

// cardOf returns the merchant's card, or ENOTFOUND "card" when it does not
// exist or is another merchant's: the two answers are the same.
func (st *Tx) cardOf(merchant int64, cardNo string) (*cardState, error) {
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
func (st *Tx) changeCard(c *cardState, fn func(r *cardRow)) {
	saved, savedDirty := c.row, c.dirty
	st.undo = append(st.undo, func() { c.row, c.dirty = saved, savedDirty })
	fn(&c.row)
	c.row.UpdatedAt = st.now
	c.dirty = true
}

func (st *Tx) addCard(r cardRow) *cardState {
	st.ext.init()
	c := &cardState{row: r, isNew: true}
	st.ext.cards[r.CardNo] = c
	delete(st.ext.cardAbsent, r.CardNo)
	st.cardAccounts[r.CardNo] = true // a new card has no accounts yet
	st.ext.newCards = append(st.ext.newCards, c)
	return c
}

// day is the batch's UTC day, YYYY-MM-DD: the issuing counters' key.
func (st *Tx) day() string { return st.now.UTC().Format("2006-01-02") }

// issuedToday returns the day's card-issuing counter of a merchant and
// currency, loading it on first use.
func (st *Tx) issuedToday(merchant int64, currency string) (*issueState, error) {
	st.ext.init()
	k := issueKey{merchant, currency, st.day()}
	if _, ok := st.ext.issued[k]; !ok {
		p := st.Pipeline()
		st.queueIssued(p, []issueKey{k})
		if err := p.Send(); err != nil {
			return nil, err
		}
	}
	return st.ext.issued[k], nil
}

func (st *Tx) addIssued(s *issueState, amount int64) {
	saved, savedDirty := s.issued, s.dirty
	st.undo = append(st.undo, func() { s.issued, s.dirty = saved, savedDirty })
	s.issued += amount
	s.dirty = true
}

// flush queues the writes of the domain rows.
func (e *extState) flush(st *Tx, p *Pipeline) {
	e.flushCards(p)
	e.flushIssued(p)
	e.network.flush(p)
	e.remit.flush(p)
}

var stmtInsertCards = NewStmt(`
	insert into cards (` + cardColumns + `)
	select * from unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::smallint[],
	                     $8::smallint[], $9::bytea[], $10::bytea[], $11::text[], $12::text[], $13::text[], $14::text[],
	                     $15::timestamptz[], $16::timestamptz[], $17::timestamptz[])`)

var stmtUpdateCards = NewStmt(`
	update cards c set status = v.status, freeze_reason = v.reason, updated_at = v.updated, cancelled_at = v.cancelled
	from unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[], $5::timestamptz[])
	     as v(card_no, status, reason, updated, cancelled)
	cross join lateral (select ctid from cards x where x.card_no = v.card_no offset 0) x
	where c.ctid = x.ctid`)

func (e *extState) flushCards(p *Pipeline) {
	if n := len(e.newCards); n > 0 {
		var (
			nos, bins, curs, nets, last4s, statuses = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
			ms                                      = make([]int64, n)
			months, years                           = make([]int16, n), make([]int16, n)
			sealed, fps                             = make([][]byte, n), make([][]byte, n)
			reasons, remarks, urls                  = make([]*string, n), make([]*string, n), make([]*string, n)
			created, updated                        = make([]time.Time, n), make([]time.Time, n)
			cancelled                               = make([]*time.Time, n)
		)
		for i, c := range e.newCards {
			r := &c.row
			nos[i], ms[i], bins[i], curs[i], nets[i], last4s[i] = r.CardNo, r.MerchantID, r.Bin, r.Currency, r.Network, r.Last4
			months[i], years[i], sealed[i], fps[i], statuses[i] = int16(r.ExpiryMonth), int16(r.ExpiryYear), r.PanSealed, r.PanFingerprint, r.Status
			reasons[i], remarks[i], urls[i] = NullText(r.FreezeReason), NullText(r.Remark), NullText(r.CallbackURL)
			created[i], updated[i], cancelled[i] = r.CreatedAt, r.UpdatedAt, NullTime(r.CancelledAt)
		}
		p.ExecRows(stmtInsertCards, n, "cards", nos, ms, bins, curs, nets, last4s, months, years, sealed, fps, statuses,
			reasons, remarks, urls, created, updated, cancelled)
	}
	var nos, statuses []string
	var reasons []*string
	var updated []time.Time
	var cancelled []*time.Time
	for _, c := range e.cards {
		if c.dirty && !c.isNew {
			nos, statuses = append(nos, c.row.CardNo), append(statuses, c.row.Status)
			reasons, updated = append(reasons, NullText(c.row.FreezeReason)), append(updated, c.row.UpdatedAt)
			cancelled = append(cancelled, NullTime(c.row.CancelledAt))
		}
	}
	if len(nos) > 0 {
		p.ExecRows(stmtUpdateCards, len(nos), "cards", nos, statuses, reasons, updated, cancelled)
	}
}

var stmtUpsertIssued = NewStmt(`
	insert into card_issue_daily (merchant_id, currency, day, issued)
	select * from unnest($1::bigint[], $2::text[], $3::date[], $4::bigint[])
	on conflict (merchant_id, currency, day) do update set issued = excluded.issued`)

func (e *extState) flushIssued(p *Pipeline) {
	var ms, amounts []int64
	var curs, days []string
	for k, s := range e.issued {
		if s.dirty {
			ms, curs, days, amounts = append(ms, k.merchant), append(curs, k.currency), append(days, k.day), append(amounts, s.issued)
		}
	}
	if len(ms) > 0 {
		p.ExecRows(stmtUpsertIssued, len(ms), "issuing counters", ms, curs, days, amounts)
	}
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

package main

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/postings"
)

// shopFacts are what the checks of the shop operations found besides the
// violations.
type shopFacts struct {
	succeeded, businessFailures int
	lostAnswers                 int // committed before a kill, unanswered, recovered by a retry
}

type idemRow struct {
	MerchantID int64     `bun:"merchant_id"`
	Key        string    `bun:"key"`
	FirstSeq   *int64    `bun:"first_seq"`
	LastSeq    *int64    `bun:"last_seq"`
	Status     int       `bun:"status"`
	CreatedAt  time.Time `bun:"created_at"`
}

// checkShopOps checks, against the database, every operation the clients
// sent and what they were answered:
//   - every operation was answered, and no well-formed request was refused;
//   - every acknowledged transfer (txId) is in the journal exactly once,
//     every created card (cardNo) exists once with at most one CARD_FUND;
//   - every key is stored once, and the entries it names are the
//     operation's (so a retried operation wrote exactly once);
//   - the journal holds no other transfer, card or funding entry than the
//     acknowledged ones (nothing ran twice under two keys);
//   - each funding balance equals the deposits minus what the acknowledged
//     operations moved (plus the scenario's own known delta), each card's
//     balance its funding plus its transfers.
//
// kills are the times the gateway was killed: an operation whose key was
// stored before a kill but whose answer came after it lost its answer to
// the kill and got it back from the retry.
func checkShopOps(ctx context.Context, db *bun.DB, l *services, ms []*merchant, ops []*shopOp, kills []time.Time) ([]string, shopFacts) {
	var v []string
	var f shopFacts
	add := func(format string, args ...any) { v = append(v, fmt.Sprintf(format, args...)) }

	var txIDs, cardNos, keys []string
	byKey := map[string]*shopOp{}
	for _, o := range ops {
		byKey[fmt.Sprintf("%d/%s", o.m.id, o.key)] = o
		keys = append(keys, o.key)
		switch {
		case !o.answered:
			add("op %d (%s, key %s) was never answered after %d attempts", o.i, o.kind, o.key, o.attempts)
			continue
		case o.refused != "":
			add("op %d (%s, key %s) was refused: %s", o.i, o.kind, o.key, o.refused)
			continue
		case o.dupMismatch != "":
			add("op %d (%s, key %s) sent to two gateways at once: %s", o.i, o.kind, o.key, o.dupMismatch)
		}
		if !o.ok() {
			f.businessFailures++
			continue
		}
		f.succeeded++
		switch o.kind {
		case kindIn, kindOut:
			if o.txID == "" {
				add("op %d (%s) succeeded without a txId", o.i, o.kind)
			}
			txIDs = append(txIDs, o.txID)
		case kindCreate:
			if o.cardNo == "" {
				add("op %d (card create) succeeded without a cardNo", o.i)
			}
			cardNos = append(cardNos, o.cardNo)
		}
	}

	// Transfers: exactly one entry per acknowledged txId, of its kind.
	var txRows []struct {
		TxID  string `bun:"tx_id"`
		Kind  string `bun:"kind"`
		Count int    `bun:"n"`
	}
	if err := db.NewRaw(`select tx_id, min(kind) as kind, count(*) as n from entries where tx_id = any(?) group by tx_id`,
		pgdialect.Array(txIDs)).Scan(ctx, &txRows); err != nil {
		add("reading entries by txId: %v", err)
	}
	txCount := map[string]int{}
	txKind := map[string]string{}
	for _, r := range txRows {
		txCount[r.TxID], txKind[r.TxID] = r.Count, r.Kind
	}
	for _, o := range ops {
		if !o.ok() || (o.kind != kindIn && o.kind != kindOut) {
			continue
		}
		want := string(postings.KindCardTransferIn)
		if o.kind == kindOut {
			want = string(postings.KindCardTransferOut)
		}
		if n := txCount[o.txID]; n != 1 || txKind[o.txID] != want {
			add("acknowledged transfer %s (op %d, key %s) is in the journal %d times (kind %s)", o.txID, o.i, o.key, n, txKind[o.txID])
		}
	}

	// Card creates: the card exists, once, with its funding entry.
	var cardRows []struct {
		CardNo string `bun:"card_no"`
		M      int64  `bun:"merchant_id"`
		Funds  int    `bun:"funds"`
	}
	if err := db.NewRaw(`
		select c.card_no, c.merchant_id,
		       (select count(*) from entries e where e.card_no = c.card_no and e.kind = 'CARD_FUND') as funds
		from cards c where c.card_no = any(?)`, pgdialect.Array(cardNos)).Scan(ctx, &cardRows); err != nil {
		add("reading cards: %v", err)
	}
	cardSeen := map[string]int{}
	for _, r := range cardRows {
		cardSeen[r.CardNo] = r.Funds + 1
	}
	for _, o := range ops {
		if !o.ok() || o.kind != kindCreate {
			continue
		}
		wantFunds := 0
		if o.amount > 0 {
			wantFunds = 1
		}
		if n := cardSeen[o.cardNo]; n == 0 || n-1 != wantFunds {
			add("created card %s (op %d, key %s): present=%v with %d CARD_FUND entries, want %d", o.cardNo, o.i, o.key, n > 0, max(n-1, 0), wantFunds)
		}
	}

	// Keys: one per operation; the entries in its range are the operation's.
	var rows []idemRow
	if err := db.NewRaw(`select merchant_id, key, first_seq, last_seq, status, created_at from idempotency_keys where scope = 'shop' and key = any(?)`,
		pgdialect.Array(keys)).Scan(ctx, &rows); err != nil {
		add("reading idempotency keys: %v", err)
	}
	stored := map[string]idemRow{}
	for _, r := range rows {
		stored[fmt.Sprintf("%d/%s", r.MerchantID, r.Key)] = r
	}
	for k, o := range byKey {
		if !o.answered || o.refused != "" {
			continue
		}
		r, ok := stored[k]
		if !ok {
			add("op %d (%s): its key %s is not stored, but it was answered %s", o.i, o.kind, o.key, o.answerText())
			continue
		}
		wrote := o.ok() && (o.kind == kindIn || o.kind == kindOut || (o.kind == kindCreate && o.amount > 0))
		switch {
		case wrote && (r.FirstSeq == nil || *r.LastSeq != *r.FirstSeq):
			add("op %d (%s, key %s): the key names entries %v..%v, want exactly one", o.i, o.kind, o.key, r.FirstSeq, r.LastSeq)
		case !wrote && r.FirstSeq != nil:
			add("op %d (%s, key %s) answered %s but its key names entries %d..%d", o.i, o.kind, o.key, o.answerText(), *r.FirstSeq, *r.LastSeq)
		case wrote:
			var ref struct {
				TxID   *string `bun:"tx_id"`
				CardNo *string `bun:"card_no"`
			}
			if err := db.NewRaw(`select tx_id, card_no from entries where merchant_id = ? and merchant_seq = ?`, o.m.id, *r.FirstSeq).
				Scan(ctx, &ref); err != nil {
				add("op %d: reading entry %d: %v", o.i, *r.FirstSeq, err)
			} else if (o.kind == kindCreate && (ref.CardNo == nil || *ref.CardNo != o.cardNo)) ||
				(o.kind != kindCreate && (ref.TxID == nil || *ref.TxID != o.txID)) {
				add("op %d (%s, key %s): the key's entry is not the operation's", o.i, o.kind, o.key)
			}
		}
		// Answered after a kill, but committed before it: the kill ate the
		// answer and the retry recovered it.
		for _, k := range kills {
			if r.CreatedAt.Before(k) && o.answeredAt.After(k) {
				f.lostAnswers++
				break
			}
		}
	}

	// Nothing else: per merchant, the transfer, card and funding entries
	// are exactly the acknowledged ones, and the balances follow.
	for _, m := range ms {
		var n struct {
			In    int `bun:"n_in"`
			Out   int `bun:"n_out"`
			Fund  int `bun:"n_fund"`
			Cards int `bun:"n_cards"`
		}
		if err := db.NewRaw(`
			select count(*) filter (where kind = 'CARD_TRANSFER_IN') as n_in,
			       count(*) filter (where kind = 'CARD_TRANSFER_OUT') as n_out,
			       count(*) filter (where kind = 'CARD_FUND') as n_fund,
			       (select count(*) from cards where merchant_id = ?) as n_cards
			from entries where merchant_id = ?`, m.id, m.id).Scan(ctx, &n); err != nil {
			add("counting entries of merchant %d: %v", m.id, err)
			continue
		}
		var wantIn, wantOut, wantFund, wantCards int
		funding := m.deposits - m.setupFunding + m.fundingDelta
		cardBal := map[string]int64{}
		for _, c := range m.cards {
			cardBal[c.no] = c.initial
			wantCards++
			if c.initial > 0 {
				wantFund++
			}
		}
		for _, c := range m.netCards {
			wantCards++
			if c.initial > 0 {
				wantFund++
			}
		}
		for _, o := range ops {
			if o.m != m || !o.ok() {
				continue
			}
			switch o.kind {
			case kindIn:
				wantIn++
				funding -= o.amount
				cardBal[o.card.no] += o.amount
			case kindOut:
				wantOut++
				funding += o.amount
				cardBal[o.card.no] -= o.amount
			case kindCreate:
				wantCards++
				if o.amount > 0 {
					wantFund++
				}
				funding -= o.amount
				cardBal[o.cardNo] = o.amount
			}
		}
		if n.In != wantIn || n.Out != wantOut || n.Fund != wantFund || n.Cards != wantCards {
			add("merchant %d journal: %d IN, %d OUT, %d CARD_FUND, %d cards; the acknowledged operations make %d, %d, %d, %d",
				m.id, n.In, n.Out, n.Fund, n.Cards, wantIn, wantOut, wantFund, wantCards)
		}
		got, err := l.Balance(ctx, postings.MerchantAccount(m.id, postings.AccountFunding, m.cur))
		if err != nil {
			add("funding balance of %d: %v", m.id, err)
		} else if got != funding {
			add("merchant %d funding balance is %d; deposits %d minus what the acknowledged operations moved%s make %d",
				m.id, got, m.deposits, m.expectedFundingReason, funding)
		}
		nos := make([]string, 0, len(cardBal))
		for no := range cardBal {
			nos = append(nos, no)
		}
		for i := 0; i < len(nos); i += cards.CardsMax {
			chunk := nos[i:min(i+cards.CardsMax, len(nos))]
			cards, err := l.cards.Cards(ctx, m.id, chunk)
			if err != nil {
				add("reading cards of %d: %v", m.id, err)
				break
			}
			for _, no := range chunk {
				c := cards[no]
				if c == nil {
					add("card %s of merchant %d is missing", no, m.id)
				} else if c.Available != cardBal[no] {
					add("card %s balance is %d; its funding and acknowledged transfers make %d", no, c.Available, cardBal[no])
				}
			}
		}
	}
	return v, f
}

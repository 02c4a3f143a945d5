package audit

import (
	"fmt"
	"maps"
	"slices"

	"github.com/paygate/gateway/postings"
)

// The bill lines are exactly the movements of billable accounts: each line
// one side of a posting, with the side's signed amount and currency and the
// entry's kind and time; each posting side on a billable account a line;
// each merchant's bill_seq gapless up to its head. These are checked in the
// stream, where an entry's postings and lines arrive together (the cursors
// read both tables in the entry's order), rather than by queries: joining a
// million lines to their postings took a probe per line, or a join whose
// method came from the statistics (issue 17). The balance_after chain runs
// across entries, in each account's order, and stays a query (billChain).

// billLine is what the checks need of a bill line.
type billLine struct {
	billSeq      int64
	idx          int16
	account      int64
	amount       int64
	currency     string
	kind         string
	atMicro      int64 // created_at as stored
	balanceAfter int64
}

// billSeqCount counts one merchant's bill lines as they go by.
type billSeqCount struct {
	merchant int64
	lines    int64
	highest  int64
}

// addLine adds a bill line row to the entry's group.
func (s *chainStream) addLine(v [][]byte) error {
	var l billLine
	idx, err := int2Col(v, colLineIdx)
	if err != nil {
		return err
	}
	l.idx = idx
	if l.account, err = int8Col(v, colLineAccount); err != nil {
		return err
	}
	if l.billSeq, err = int8Col(v, colLineSeq); err != nil {
		return err
	}
	if l.atMicro, err = int8Col(v, colLineCreatedAt); err != nil {
		return err
	}
	if l.amount, err = int8Col(v, colLineAmount); err != nil {
		return err
	}
	if l.balanceAfter, err = int8Col(v, colLineBalanceAfter); err != nil {
		return err
	}
	l.kind, l.currency = s.strs.get(v[colLineKind]), s.strs.get(v[colLineCurrency])
	s.lines = append(s.lines, l)
	return nil
}

// checkBill checks the bill lines of key k against its postings and its
// entry (hasEntry: there is one; s.rec holds it).
func (s *chainStream) checkBill(k journalKey, hasEntry bool) {
	if len(s.lines) > 0 {
		if k.merchant != s.billSeq.merchant {
			s.finishBillMerchant()
			s.billSeq = billSeqCount{merchant: k.merchant}
		}
		s.billSeq.lines += int64(len(s.lines))
	}
	highest, problems := s.billSeq.highest, s.bill.count()
	differs := !hasEntry
	legacy := s.position.legacyEntry(k.merchant, k.seq) // verify_position.go
	for _, l := range s.lines {
		s.billSeq.highest = max(s.billSeq.highest, l.billSeq)
		if hasEntry && (l.kind != s.wantKind(l, legacy) || l.atMicro != s.atMicro) {
			differs = true
		}
		if _, ok := s.side(l); !ok {
			s.bill.add(Problem{Check: CheckBill, Merchant: k.merchant,
				Detail: fmt.Sprintf("bill line %d (entry %d) has no matching posting side", l.billSeq, k.seq)})
		}
	}
	if len(s.lines) > 0 && differs {
		s.bill.add(Problem{Check: CheckBill, Merchant: k.merchant,
			Detail: fmt.Sprintf("the bill lines of entry %d differ from it in kind or time, or it does not exist", k.seq)})
	}
	// Every side on a billable account has its line. Source and
	// destination differ (postings_distinct_accounts_check), so a posting
	// and an account name one side.
	for i, p := range s.rec.Postings {
		for _, side := range [...]struct {
			id      int64
			account *postings.Account
		}{{s.sides[i].source, &p.Source}, {s.sides[i].destination, &p.Destination}} {
			if billableUnder(side.account.Type, legacy) && !s.hasLine(s.idx[i], side.id) {
				s.bill.add(Problem{Check: CheckBill, Merchant: side.account.Merchant, Account: side.account.Address(),
					Detail: fmt.Sprintf("entry %d posting %d has no bill line", k.seq, s.idx[i])})
			}
		}
	}
	if s.bill.count() != problems {
		s.follow.giveUp()
	}
	s.followChain(k, highest)
}

// side returns the account of which l is the side in its posting: the
// posting's source with the amount negated, or its destination with the
// amount, in the posting's currency; false when it is neither.
func (s *chainStream) side(l billLine) (postings.Account, bool) {
	for i, idx := range s.idx {
		if idx != l.idx {
			continue
		}
		p, sd := &s.rec.Postings[i], s.sides[i]
		switch {
		case l.currency != p.Currency:
		case l.account == sd.source && l.amount == -p.Amount:
			return p.Source, true
		case l.account == sd.destination && l.amount == p.Amount:
			return p.Destination, true
		}
		return postings.Account{}, false
	}
	return postings.Account{}, false
}

// hasLine reports whether the entry has a bill line for posting idx on
// account.
func (s *chainStream) hasLine(idx int16, account int64) bool {
	for _, l := range s.lines {
		if l.idx == idx && l.account == account {
			return true
		}
	}
	return false
}

// finishBillMerchant compares the lines counted for a merchant with its
// head: gapless from 1 means as many lines as the highest bill_seq (the
// primary key makes each one unique), and the highest is the head's.
// Lines of a merchant without a head are not compared with anything.
func (s *chainStream) finishBillMerchant() {
	c := s.billSeq
	if c.merchant == 0 {
		return
	}
	head, ok := s.billHeads[c.merchant]
	if !ok {
		return
	}
	delete(s.billHeads, c.merchant)
	if c.lines != c.highest || c.highest != head {
		s.bill.add(billSeqProblem(c.merchant, c.lines, c.highest, head))
	}
}

// finishBillHeads reports the heads that count bill lines the stream did
// not find.
func (s *chainStream) finishBillHeads() {
	for _, m := range slices.Sorted(maps.Keys(s.billHeads)) {
		if head := s.billHeads[m]; head != 0 {
			s.bill.add(billSeqProblem(m, 0, 0, head))
		}
	}
	clear(s.billHeads)
	if s.bill.count() != 0 {
		s.follow.giveUp() // the chain is the query's when anything about the lines is wrong
	}
}

func billSeqProblem(m, lines, highest, head int64) Problem {
	return Problem{Check: CheckBill, Merchant: m,
		Detail: fmt.Sprintf("bill sequence: %d lines, highest %d, head says %d", lines, highest, head)}
}

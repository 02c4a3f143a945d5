package reconcile

import (
	"context"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Recording a settlement reconciliation (records.go). Only a file that
// matched completely is recorded: a file with discrepancies is not
// accepted, so the corrected file the network sends next is not a second
// claim on the clearings they share. The same file again (the same
// SHA-256) is the same run: reported as already recorded, matched, never
// as billed twice.

// recordNameMax bounds the file's name and the actor as recorded.
const recordNameMax = 200

func (m *matcher) record(ctx context.Context, in SettlementInput, sum []byte) error {
	rep := m.rep
	if m.rec == nil {
		return nil
	}
	if m.sameRun != nil {
		rep.Recorded, rep.AlreadyRecorded = m.sameRun, true
		return nil
	}
	items := make([]RecordedItem, len(rep.matched))
	for i, mr := range rep.matched {
		items[i] = RecordedItem{EntryID: mr.entryID, Line: mr.line}
	}
	run := Run{Kind: KindCardClearing, FileName: recordText(in.Name, "(unnamed)"), From: rep.From, To: rep.To,
		Actor: recordText(in.Actor, "(unknown)"), Rows: rep.Rows}
	res, err := m.rec.Record(ctx, run, sum, items)
	if err != nil {
		return err
	}
	if len(res.Taken) > 0 {
		return m.takenMeanwhile(ctx, res.Taken)
	}
	rep.Recorded, rep.AlreadyRecorded = res.Run, res.Existing
	return nil
}

// takenMeanwhile turns the matched rows whose clearings another run
// recorded while this one read into already_reconciled items.
func (m *matcher) takenMeanwhile(ctx context.Context, taken []int64) error {
	claims, err := m.rec.Claims(ctx, KindCardClearing, taken)
	if err != nil {
		return err
	}
	rep := m.rep
	for _, mr := range rep.matched {
		c, ok := claims[mr.entryID]
		if !ok {
			continue
		}
		rep.Counts.Matched--
		rep.totals[mr.amount.Currency.Code].subMatched(mr.amount.Minor)
		amount := mr.amount
		rep.add(SettlementItem{Category: CategoryAlreadyReconciled, Line: mr.line, AuthID: mr.authID,
			FileAmount: &amount, FileCurrency: amount.Currency.Code, Detail: claimedDetail(c)})
	}
	rep.finishTotals()
	return nil
}

// recordText is s fit for a record: at most recordNameMax bytes,
// printable, else def.
func recordText(s, def string) string {
	s = printable(truncateText(strings.TrimSpace(s), recordNameMax-8))
	if s == "" || s == `""` {
		return def
	}
	return s
}

// printable is s as a person may see it: s itself when it is UTF-8 without
// control characters, else quoted with Go's escapes, so that no byte of a
// file's name or content reaches a terminal or a page raw.
func printable(s string) string {
	if utf8.ValidString(s) && strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) && r != ' ' }) < 0 {
		return s
	}
	return strconv.Quote(s)
}

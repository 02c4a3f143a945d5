package reconcile

import (
	"context"
	"fmt"
)

// What the bank statement's and the rail report's reconciliations share
// beyond the settlement file's parser, totals and records.

// listItem counts nothing: it lists it while there is room, else counts
// it as omitted (a report lists at most settlementItemsMax).
func listItem[T any](items *[]T, omitted *int64, it T) {
	if len(*items) >= settlementItemsMax {
		*omitted++
		return
	}
	*items = append(*items, it)
}

// periodText is a period as a report names it: one day, or FROM/TO.
func periodText(from, to string) string {
	if from == to {
		return from
	}
	return from + "/" + to
}

// linesVerdict is the verdict on a file of rows: discrepancies when any
// row or ledger item needs a person, else matched, saying of what (items:
// "deposits", "settlements and returns").
func linesVerdict(toAct, checked, rows int64, period, file, items string) Verdict {
	if toAct > 0 {
		return discrepanciesVerdict(toAct, checked)
	}
	if rows == 0 {
		return matchedVerdict(fmt.Sprintf("the %s and the ledger both have no %s in the period %s", file, items, period))
	}
	return matchedVerdict(fmt.Sprintf("every row matched and the ledger has none of the %s of the period %s that the %s lacks",
		items, period, file))
}

// recordMatchedItems records matched (recordMatched) and hands each item
// another run took meanwhile to taken, with its claim, for the report.
func recordMatchedItems(ctx context.Context, rec *Records, sameRun *Run, run Run, sum []byte, matched []matchedItem,
	taken func(matchedItem, Claim)) (*Run, bool, error) {
	items := make([]RecordedItem, len(matched))
	for i, mr := range matched {
		items[i] = mr.RecordedItem
	}
	recorded, already, claims, err := recordMatched(ctx, rec, sameRun, run, sum, items)
	if err != nil {
		return nil, false, err
	}
	for _, it := range matched {
		if c, ok := claims[it.EntryID]; ok {
			taken(it, c)
		}
	}
	return recorded, already, nil
}

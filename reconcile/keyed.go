package reconcile

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/paygate/gateway/postings"
)

// What the reconciliations of files keyed by one id per row share (the
// settlement file by authorization, the rail report by remittance, the
// refund file by message id): the screen
// of a row, the ledger's answer for a batch, the earlier runs' claims,
// the records of a run, and the cells every such file has.

// keyedScreen decides what the file alone decides about a row keyed by
// an id: invalid, a second row of the id, dated outside the period.
type keyedScreen struct {
	seen   map[string]int64 // id → the line that named it first
	period Period
	totals *currencyTotals
	file   string // how a detail names the file: "report", "file"
	what   string // what an id names: "remittance", "refund message"
}

func newKeyedScreen(period Period, totals *currencyTotals, file, what string) keyedScreen {
	return keyedScreen{seen: map[string]int64{}, period: period, totals: totals, file: file, what: what}
}

// screen returns the finding about a row ("" when it goes on to the
// ledger). An invalid row still claims its id, so that the ledger's item
// of the id is not also missing_in_file; a readable row counts in the
// file's totals.
func (s *keyedScreen) screen(id *string, line int64, problem string, amount postings.Money, day time.Time, date string) (category, detail string) {
	// A clone: the id shares its memory with the whole line; the row
	// keeps the seen map's copy.
	claim := func() {
		if *id != "" && s.seen[*id] == 0 {
			*id = strings.Clone(*id)
			s.seen[*id] = line
		}
	}
	if problem != "" {
		claim()
		return CategoryInvalidRow, problem
	}
	if prev := s.seen[*id]; prev != 0 {
		return CategoryDuplicateInFile, fmt.Sprintf("%s already on line %d; this row is not matched", s.what, prev)
	}
	claim()
	s.totals.sum(amount).addFile(amount.Minor)
	if !s.period.contains(day) {
		return CategoryOutsidePeriod, fmt.Sprintf("dated %s, outside the %s's period %s: not matched", date, s.file, s.period)
	}
	return "", ""
}

// screenKeyed is a keyed matcher's screen: keyedScreen's finding about
// the row (id: its key, which the screen may clone), and the row's item
// (made by item, added by add) when the row stops there. It reports
// whether the row goes on to the ledger.
func screenKeyed[I any](s *keyedScreen, add func(I), item func(category, detail string, valid bool) I,
	id *string, line int64, problem string, amount postings.Money, day time.Time, date string) bool {
	category, detail := s.screen(id, line, problem, amount, day, date)
	if category != "" {
		add(item(category, detail, problem == ""))
	}
	return category == ""
}

// keyedLookup is how a keyed file's rows find their entries: the row's
// id, the source's answer for a batch of ids (what names them in an
// error), the entry's id when it can be claimed, and the record kind whose
// earlier claims count.
type keyedLookup[R, E any] struct {
	kind, what string
	id         func(*R) string
	read       func(context.Context, []string) ([]E, error)
	entry      func(*E) (int64, bool)
}

// match looks a batch of rows up and hands each, with its entry and the
// earlier runs' claims on the batch, to decide.
func (k keyedLookup[R, E]) match(ctx context.Context, fr *fileRun, rows []R, decide func(row *R, e *E, claims map[int64]Claim)) error {
	if len(rows) == 0 {
		return nil
	}
	found, err := lookUp(ctx, rows, k.id, k.read, k.what)
	if err != nil {
		return err
	}
	claims, err := claimsOf(ctx, fr.rec, k.kind, found, k.entry)
	if err != nil {
		return err
	}
	for i := range rows {
		decide(&rows[i], &found[i], claims)
	}
	return nil
}

// lookUp asks the ledger about a batch of rows by their ids: one answer
// per row, in order (what names the ids in the error when it is not).
func lookUp[R, E any](ctx context.Context, rows []R, id func(*R) string, read func(context.Context, []string) ([]E, error),
	what string) ([]E, error) {
	ids := make([]string, len(rows))
	for i := range rows {
		ids[i] = id(&rows[i])
	}
	found, err := read(ctx, ids)
	if err != nil {
		return nil, err
	}
	if len(found) != len(rows) {
		return nil, fmt.Errorf("reconcile: asked for %d %s, the ledger answered %d", len(rows), what, len(found))
	}
	return found, nil
}

// claimsOf reads the earlier runs' claims of kind on the entries of a
// batch (entry: the entry id and whether it can be claimed); rec nil
// reads none.
func claimsOf[E any](ctx context.Context, rec *Records, kind string, found []E, entry func(*E) (int64, bool)) (map[int64]Claim, error) {
	if rec == nil {
		return nil, nil
	}
	var entries []int64
	for i := range found {
		if id, ok := entry(&found[i]); ok {
			entries = append(entries, id)
		}
	}
	return rec.Claims(ctx, kind, entries)
}

// fileRun is a reconciliation's records: rec (nil: no claims are read
// and nothing is recorded) and sameRun, the run that recorded this very
// file before, if any: its claims are the file's own, not a second claim.
type fileRun struct {
	rec     *Records
	sameRun *Run
}

// claimedBefore is the claim another run made on entry, if any.
func (r *fileRun) claimedBefore(claims map[int64]Claim, entry int64) (Claim, bool) {
	c, ok := claims[entry]
	return c, ok && (r.sameRun == nil || c.Run.ID != r.sameRun.ID)
}

// trimCells trims a record's cells; a record the CSV reader spoiled is
// its problem.
func trimCells(rec []string, readErr error, header []string) string {
	if readErr != nil {
		return csvProblem(rec, readErr, header)
	}
	for i := range rec {
		rec[i] = strings.TrimSpace(rec[i])
	}
	return ""
}

// moneyCells reads the amount and currency cells (> 0, in the currency's
// decimals); problem names the cell, its text escaped and cut short (and
// an amount's problem ends with note).
func moneyCells(amount, currency, note string) (m postings.Money, problem string) {
	cur, err := postings.LookupCurrency(currency)
	if err != nil {
		return m, fmt.Sprintf("currency %q: %s", truncateText(currency, 8), postings.AsError(err).Message)
	}
	minor, err := postings.ParseAmount(amount, cur)
	if err != nil {
		return m, fmt.Sprintf("amount %q: %s%s", truncateText(amount, 40), postings.AsError(err).Message, note)
	}
	return money(minor, cur), ""
}

// dateCell reads a date cell (field: its column): a day in range before
// it reaches SQL or the period's comparison (postings.ParseDay).
func dateCell(field, text string) (time.Time, string) {
	day, err := postings.ParseDay(field, text)
	if err != nil {
		return day, fmt.Sprintf("%s %q: %s", field, truncateText(text, 40), postings.AsError(err).Message)
	}
	return day, ""
}

package reconcile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
)

// What the file reconciliations share in reading a file and driving a
// matcher (report_parts.go: what their reports share).

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

// openFile hashes a reconciliation file (its SHA-256 names the run),
// rewinds it, reads its period line and header, and resolves the period
// with the caller's.
func openFile(f io.ReadSeeker, header []string, given Period) ([]byte, *csvParser, Period, error) {
	sum, err := fileSHA256(f)
	if err != nil {
		return nil, nil, Period{}, err
	}
	p, err := newCSVParser(f, header)
	if err != nil {
		return nil, nil, Period{}, err
	}
	period, err := resolvePeriod(p.period, given, 1)
	return sum, p, period, err
}

// readLines reads every record of p, counting it in rows (at most
// settlementRowsMax), parses it, lets screen decide what the file alone
// decides, and hands the rest to match settlementBatch at a time.
func readLines[T any](ctx context.Context, p *csvParser, rows *int64, parse func(int64, []string, error) (T, string),
	screen func(*T, string) bool, match func(context.Context, []T) error) error {
	var pending []T
	for {
		line, rec, readErr, err := p.record()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if *rows++; *rows > settlementRowsMax {
			return &FileError{Line: line, Msg: fmt.Sprintf("more than %d rows: split the file", settlementRowsMax)}
		}
		row, problem := parse(line, rec, readErr)
		if !screen(&row, problem) {
			continue
		}
		if pending = append(pending, row); len(pending) == settlementBatch {
			if err := match(ctx, pending); err != nil {
				return err
			}
			pending = pending[:0]
		}
	}
	return match(ctx, pending)
}

// nameFileError names the kind of file in a *FileError's message.
func nameFileError(err error, what string) error {
	var fe *FileError
	if errors.As(err, &fe) && fe.What == "" {
		fe.What = what
	}
	return err
}

// writeItemsTail ends a report's table of items: how many were not
// listed, then a blank line.
func writeItemsTail(w io.Writer, omitted int64) {
	if omitted > 0 {
		fmt.Fprintf(w, "… and %d more, not listed (the counts below include them)\n", omitted)
	}
	fmt.Fprintln(w)
}

// writeVerdict ends a report: the counts line, what was recorded, the
// verdict last.
func writeVerdict(w io.Writer, counts, recorded string, v Verdict) error {
	fmt.Fprintln(w, counts)
	fmt.Fprintln(w, recorded)
	_, err := fmt.Fprintln(w, v.Line())
	return err
}

// lineMatcher and lineReport are what reconcileFile drives: a
// settlement file's, a bank statement's, a rail report's or a refund
// file's matcher and report (fileReport). screen may rewrite the row (its
// id, cloned out of the line's memory).
type lineMatcher[T any] interface {
	screen(*T, string) bool
	match(context.Context, []T) error
	missingInFile(context.Context) error
}

type lineReport interface {
	rowsRead() *int64
	finishTotals()
	OK() bool
	sortItems()
	finish() // sets the verdict
	startRun(ctx context.Context, fr *fileRun, sum []byte) error
	record(ctx context.Context, fr *fileRun, sum []byte, name, actor string) error
}

// reconcileFile reads and matches the file's lines (p: opened; sum: its
// SHA-256; name and actor as recorded), then the ledger's side, sums the
// totals, records a file that matched (without records, nothing), and
// orders the items and gives the verdict.
func reconcileFile[T any](ctx context.Context, fr *fileRun, p *csvParser, sum []byte, name, actor string,
	parse func(int64, []string, error) (T, string), m lineMatcher[T], rep lineReport) error {
	if err := rep.startRun(ctx, fr, sum); err != nil {
		return err
	}
	if err := readLines(ctx, p, rep.rowsRead(), parse, m.screen, m.match); err != nil {
		return err
	}
	if err := m.missingInFile(ctx); err != nil {
		return err
	}
	rep.finishTotals()
	if rep.OK() {
		if err := rep.record(ctx, fr, sum, name, actor); err != nil {
			return err
		}
	}
	rep.sortItems()
	rep.finish()
	return nil
}

// sortByRank orders a report's items by their category's rank (the file
// as a whole, money counted twice or wrongly, what is missing, then the
// file's own faults), then by line.
func sortByRank[T any](items []T, rank map[string]int, key func(*T) (category string, line int64)) {
	sort.SliceStable(items, func(i, j int) bool {
		ca, la := key(&items[i])
		cb, lb := key(&items[j])
		if ra, rb := rank[ca], rank[cb]; ra != rb {
			return ra < rb
		}
		return la < lb
	})
}

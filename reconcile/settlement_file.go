package reconcile

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/paygate/gateway/postings"
)

// recordLine is the line where the record just read starts. An error
// other than a CSV syntax error (which only spoils its record) is returned.
func recordLine(cr *csv.Reader, rec []string, err error) (int64, error) {
	var pe *csv.ParseError
	switch {
	case err == nil || (len(rec) > 0 && errors.As(err, &pe)):
		line, _ := cr.FieldPos(0)
		return int64(line), nil
	case errors.As(err, &pe):
		return int64(pe.StartLine), nil
	default:
		return 0, err
	}
}

// readSettlementHeader checks the header row, tolerating a byte order mark
// and the case and spacing of the names.
func readSettlementHeader(cr *csv.Reader, lr *lineLimitReader) error {
	rec, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return &FileError{Msg: "the file is empty: want the header " + strings.Join(settlementHeader, ",")}
	}
	var pe *csv.ParseError
	if err != nil && !errors.As(err, &pe) {
		return lr.fileError(err)
	}
	ok := err == nil
	for i := 0; ok && i < len(settlementHeader); i++ {
		name := strings.ToLower(strings.TrimSpace(strings.TrimPrefix(rec[i], "\ufeff")))
		ok = name == settlementHeader[i]
	}
	if !ok {
		return &FileError{Line: 1, Msg: "the header must be " + strings.Join(settlementHeader, ",")}
	}
	return nil
}

// parseSettlementRow reads one record; problem is empty when it is valid.
// What could be read is returned either way, for the report.
func parseSettlementRow(line int64, rec []string, readErr error) (row settlementRow, problem string) {
	row.line = line
	if readErr != nil {
		var pe *csv.ParseError
		if errors.As(readErr, &pe) && errors.Is(pe.Err, csv.ErrFieldCount) {
			return row, fmt.Sprintf("%d fields, want %d (%s)", len(rec), len(settlementHeader), strings.Join(settlementHeader, ","))
		}
		return row, "not valid CSV: " + readErr.Error()
	}
	for i := range rec {
		rec[i] = strings.TrimSpace(rec[i])
	}
	row.messageID, row.authID, row.date = rec[0], rec[1], rec[4]
	switch {
	case !postings.IsRefText(row.messageID):
		return row, "message_id: must be 1 to 64 characters of [A-Za-z0-9_.:-]"
	case !postings.IsRefText(row.authID):
		return row, "auth_id: must be 1 to 64 characters of [A-Za-z0-9_.:-]"
	}
	cur, err := postings.LookupCurrency(rec[3])
	if err != nil {
		return row, "currency: " + postings.AsError(err).Message
	}
	minor, err := postings.ParseAmount(rec[2], cur)
	if err != nil {
		return row, fmt.Sprintf("amount %q: %s", truncateText(rec[2], 40), postings.AsError(err).Message)
	}
	row.amount = money(minor, cur)
	// In range before it reaches SQL: the file's first and last dates
	// bound the ledger's side of the match (postings.ParseDay).
	if _, err := postings.ParseDay("date", row.date); err != nil {
		return row, fmt.Sprintf("date %q: %s", truncateText(row.date, 40), postings.AsError(err).Message)
	}
	return row, ""
}

func truncateText(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// lineLimitReader refuses a line longer than settlementLineBytesMax, so
// that a file without newlines cannot make the CSV reader buffer it whole,
// and counts lines for the errors it reports.
type lineLimitReader struct {
	r       io.Reader
	lineLen int
	lines   int64
	tooLong bool
}

var errLineTooLong = errors.New("line too long")

func (l *lineLimitReader) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	for i := 0; i < n; i++ {
		if p[i] == '\n' {
			l.lines++
			l.lineLen = 0
			continue
		}
		if l.lineLen++; l.lineLen > settlementLineBytesMax {
			l.tooLong = true
			return i, errLineTooLong
		}
	}
	return n, err
}

// fileError turns an error of the underlying stream into a FileError.
func (l *lineLimitReader) fileError(err error) error {
	if l.tooLong {
		return &FileError{Line: l.lines + 1, Msg: fmt.Sprintf("longer than %d bytes", settlementLineBytesMax)}
	}
	return &FileError{Msg: err.Error()}
}

package reconcile

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/paygate/gateway/postings"
)

// The reconciliation files' parser (a settlement file, a bank statement,
// the rail's report): the period line, the header, then one row at a time,
// each with its line in the file. A fault of the whole file (no
// header, a line too long, a byte that is not UTF-8, an unreadable stream)
// is a *FileError naming the line; a row that cannot be read is the row's
// problem, reported as invalid_row, and the rest goes on.

// csvParser reads a reconciliation file of the columns header.
type csvParser struct {
	header []string
	lr     *lineReader
	cr     *csv.Reader
	// base is the lines before the CSV (the period line): the CSV reader
	// counts from its own first line.
	base int64
	// period is the file's own period line, if it has one.
	period Period
}

// newCSVParser reads the period line, if any, and the header.
func newCSVParser(file io.Reader, header []string) (*csvParser, error) {
	p := &csvParser{lr: &lineReader{r: file}, header: header}
	br := bufio.NewReaderSize(p.lr, 64<<10)
	if bom, _ := br.Peek(3); string(bom) == "\ufeff" {
		_, _ = br.Discard(3) // a spreadsheet's byte order mark, before the period line or the header
	}
	if first, _ := br.Peek(1); len(first) == 1 && first[0] == '#' {
		line, err := br.ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, p.lr.fileError(err)
		}
		if p.lr.fault != nil { // the line itself was refused (length, UTF-8)
			return nil, p.lr.fault
		}
		period, problem := parsePeriodLine(line)
		if problem != "" {
			return nil, &FileError{Line: 1, Msg: problem}
		}
		p.period, p.base = period, 1
	}
	p.cr = csv.NewReader(br)
	p.cr.FieldsPerRecord = len(header)
	p.cr.ReuseRecord = true
	if err := p.readHeader(); err != nil {
		return nil, err
	}
	return p, nil
}

// readHeader checks the header row, tolerating the case and spacing of the
// names.
func (p *csvParser) readHeader() error {
	rec, err := p.cr.Read()
	if errors.Is(err, io.EOF) {
		if p.lr.fault != nil {
			return p.lr.fault
		}
		return &FileError{Msg: "the file is empty: want the header " + strings.Join(p.header, ",")}
	}
	var pe *csv.ParseError
	if err != nil && !errors.As(err, &pe) {
		return p.lr.fileError(err)
	}
	ok := err == nil
	for i := 0; ok && i < len(p.header); i++ {
		ok = strings.ToLower(strings.TrimSpace(rec[i])) == p.header[i]
	}
	if !ok {
		return &FileError{Line: p.base + 1, Msg: "the header must be " + strings.Join(p.header, ",")}
	}
	return nil
}

// record reads one record: its line in the file, its fields and the CSV
// error that spoils it (readErr), or io.EOF after the last, or a
// *FileError when the file cannot be read on (err).
func (p *csvParser) record() (line int64, rec []string, readErr, err error) {
	rec, readErr = p.cr.Read()
	if errors.Is(readErr, io.EOF) {
		if p.lr.fault != nil { // the last line, without a newline, was refused
			return 0, nil, nil, p.lr.fault
		}
		return 0, nil, nil, io.EOF
	}
	at, streamErr := recordLine(p.cr, rec, readErr)
	if streamErr != nil {
		return 0, nil, nil, p.lr.fileError(streamErr)
	}
	return p.base + at, rec, readErr, nil
}

// csvProblem is the problem of a record the CSV reader spoiled, named for
// a file of the columns header.
func csvProblem(rec []string, readErr error, header []string) string {
	var pe *csv.ParseError
	if errors.As(readErr, &pe) && errors.Is(pe.Err, csv.ErrFieldCount) {
		return fmt.Sprintf("%d fields, want %d (%s)", len(rec), len(header), strings.Join(header, ","))
	}
	if errors.As(readErr, &pe) {
		return "not valid CSV: " + pe.Err.Error()
	}
	return "not valid CSV"
}

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

// parseSettlementRow reads one record; problem is empty when it is valid.
// What could be read is returned either way, for the report; a field that
// is not what it should be is never echoed raw (%q escapes it).
func parseSettlementRow(line int64, rec []string, readErr error) (row settlementRow, problem string) {
	row.line = line
	if problem = trimCells(rec, readErr, settlementHeader); problem != "" {
		return row, problem
	}
	if postings.IsRefText(rec[0]) {
		row.messageID = rec[0]
	}
	if postings.IsRefText(rec[1]) {
		row.authID = rec[1]
	}
	switch {
	case row.messageID == "":
		return row, "message_id: must be 1 to 64 characters of [A-Za-z0-9_.:-]"
	case row.authID == "":
		return row, "auth_id: must be 1 to 64 characters of [A-Za-z0-9_.:-]"
	}
	if row.amount, problem = moneyCells(rec[2], rec[3], ""); problem != "" {
		return row, problem
	}
	if row.day, problem = dateCell("date", rec[4]); problem == "" {
		row.date = rec[4]
	}
	return row, problem
}

// truncateText shortens s to n bytes, on a rune boundary.
func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

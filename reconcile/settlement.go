package reconcile

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/postings"
)

// SettlementSource is what settlement reconciliation needs: the clearings
// the network side booked (*network.Service).
type SettlementSource interface {
	// SettlementsByAuth returns, for each authorization id, its CARD_SETTLE
	// entry if it has one and its status.
	SettlementsByAuth(ctx context.Context, authIDs []string) ([]network.Settlement, error)
	// SettlementsBetween pages through the CARD_SETTLE entries of a period.
	SettlementsBetween(ctx context.Context, from, to time.Time, after network.SettlementCursor, limit int) ([]network.Settlement, error)
}

var _ SettlementSource = (*network.Service)(nil)

// The categories of a settlement reconciliation. Every file row is exactly
// one of matched, amount_differs, missing_in_ledger, duplicate_in_file or
// invalid_row; missing_in_file is a ledger entry.
const (
	CategoryMatched         = "matched"           // same authorization, amount and currency
	CategoryAmountDiffers   = "amount_differs"    // same authorization, another amount or currency
	CategoryMissingInLedger = "missing_in_ledger" // no CARD_SETTLE entry for the row's authorization
	CategoryMissingInFile   = "missing_in_file"   // a CARD_SETTLE entry of the file's days that the file lacks
	CategoryDuplicateInFile = "duplicate_in_file" // a second row for one authorization
	CategoryInvalidRow      = "invalid_row"       // a row that cannot be read: named field, not matched
)

// settlementHeader is the settlement file's header, column by column.
var settlementHeader = []string{"message_id", "auth_id", "amount", "currency", "date"}

// Limits on a settlement file. rowsMax is a variable so that a test can
// lower it.
var settlementRowsMax int64 = 1_000_000

const (
	settlementLineBytesMax = 4096   // one line of the file
	settlementItemsMax     = 10_000 // the items a report lists; the rest are counted
	settlementBatch        = network.SettlementBatchMax
)

// SettlementReport is what a reconciliation found: counts per category,
// totals per currency, and each row or entry that needs a person.
type SettlementReport struct {
	Rows   int64             `json:"rows"`           // data rows read, the header excluded
	From   string            `json:"from,omitempty"` // the file's first date (YYYY-MM-DD)
	To     string            `json:"to,omitempty"`   // the file's last date, included
	Counts SettlementCounts  `json:"counts"`
	Totals []SettlementTotal `json:"totals"`
	// Items lists every row and entry that is not matched, in the order
	// found, up to settlementItemsMax; ItemsOmitted counts the rest.
	Items        []SettlementItem `json:"items"`
	ItemsOmitted int64            `json:"itemsOmitted"`

	totals map[string]*settlementSum
}

// SettlementCounts counts the rows and entries of each category.
type SettlementCounts struct {
	Matched         int64 `json:"matched"`
	AmountDiffers   int64 `json:"amount_differs"`
	MissingInLedger int64 `json:"missing_in_ledger"`
	MissingInFile   int64 `json:"missing_in_file"`
	DuplicateInFile int64 `json:"duplicate_in_file"`
	InvalidRow      int64 `json:"invalid_row"`
}

// SettlementTotal sums the file's readable, distinct rows of one currency
// and those of them that matched. Amounts are decimal numbers in the
// currency's units; a sum may exceed what one posting can hold, so it is
// computed exactly without a bound.
type SettlementTotal struct {
	Currency      string      `json:"currency"`
	FileRows      int64       `json:"fileRows"`
	FileAmount    json.Number `json:"fileAmount"`
	MatchedRows   int64       `json:"matchedRows"`
	MatchedAmount json.Number `json:"matchedAmount"`
}

// SettlementItem is one row of the file or one entry of the ledger that
// did not match, with what finance needs to chase it.
type SettlementItem struct {
	Category  string `json:"category"`
	Line      int64  `json:"line,omitempty"` // the file's line; 0 for missing_in_file
	MessageID string `json:"messageId,omitempty"`
	AuthID    string `json:"authId,omitempty"`
	Date      string `json:"date,omitempty"` // the file's date
	// The amounts as the file and the ledger (the network's amount kept
	// on the CARD_SETTLE entry) have them.
	FileAmount     *postings.Money `json:"fileAmount,omitempty"`
	FileCurrency   string          `json:"fileCurrency,omitempty"`
	LedgerAmount   *postings.Money `json:"ledgerAmount,omitempty"`
	LedgerCurrency string          `json:"ledgerCurrency,omitempty"`
	// The CARD_SETTLE entry, when there is one.
	ShopNo          string     `json:"shopNo,omitempty"`
	Seq             int64      `json:"seq,omitempty"`
	CardNo          string     `json:"cardNo,omitempty"`
	LedgerMessageID string     `json:"ledgerMessageId,omitempty"`
	LedgerTime      *time.Time `json:"ledgerTs,omitempty"`
	Detail          string     `json:"detail"`
}

// OK reports whether every row matched and the file lacks no entry.
func (r *SettlementReport) OK() bool {
	c := r.Counts
	return c.AmountDiffers+c.MissingInLedger+c.MissingInFile+c.DuplicateInFile+c.InvalidRow == 0
}

// FileError is a settlement file that cannot be reconciled at all: a wrong
// header, a line or a file beyond the limits, an unreadable stream.
type FileError struct {
	Line int64
	Msg  string
}

func (e *FileError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("settlement file, line %d: %s", e.Line, e.Msg)
	}
	return "settlement file: " + e.Msg
}

// settlementRow is one readable row of the file.
type settlementRow struct {
	line      int64
	messageID string
	authID    string
	amount    postings.Money
	date      string
}

// Settlement reconciles a card network settlement file against the
// journal's CARD_SETTLE entries. The file is CSV with the header
// message_id,auth_id,amount,currency,date: amount is a decimal in the
// currency's units, date is YYYY-MM-DD (UTC). Rows are matched by auth_id
// and compared, amount and currency, with the network's amount that the
// entry records (txn_amount, txn_currency); then every CARD_SETTLE entry
// created on the file's days (UTC) that no row names is missing_in_file.
//
// The file is streamed and the ledger read SettlementBatchMax rows at a
// time. What grows with the file is the set of its authorization ids
// (bounded by the row limit, 1,000,000) and the listed items (10,000).
// A *FileError means the file as a whole cannot be read.
func Settlement(ctx context.Context, src SettlementSource, file io.Reader) (*SettlementReport, error) {
	rep := &SettlementReport{Items: []SettlementItem{}, Totals: []SettlementTotal{}, totals: map[string]*settlementSum{}}
	lr := &lineLimitReader{r: file}
	cr := csv.NewReader(lr)
	cr.FieldsPerRecord = len(settlementHeader)
	cr.ReuseRecord = true
	if err := readSettlementHeader(cr, lr); err != nil {
		return nil, err
	}
	seen := map[string]int64{} // authorization id → the line that named it first
	var pending []settlementRow
	var first, last string
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		line, streamErr := recordLine(cr, rec, err)
		if streamErr != nil {
			return nil, lr.fileError(streamErr)
		}
		rep.Rows++
		if rep.Rows > settlementRowsMax {
			return nil, &FileError{Line: line, Msg: fmt.Sprintf("more than %d rows: split the file", settlementRowsMax)}
		}
		row, problem := parseSettlementRow(line, rec, err)
		if problem != "" {
			if postings.IsRefText(row.authID) && seen[row.authID] == 0 {
				seen[strings.Clone(row.authID)] = row.line // the row's entry is this row's matter, not missing_in_file
			}
			rep.add(SettlementItem{Category: CategoryInvalidRow, Line: row.line, MessageID: row.messageID,
				AuthID: row.authID, Date: row.date, Detail: problem})
			continue
		}
		if prev := seen[row.authID]; prev != 0 {
			rep.add(SettlementItem{Category: CategoryDuplicateInFile, Line: row.line, MessageID: row.messageID,
				AuthID: row.authID, Date: row.date, FileAmount: &row.amount, FileCurrency: row.amount.Currency.Code,
				Detail: fmt.Sprintf("authorization already on line %d; this row is not matched", prev)})
			continue
		}
		// A clone: the field shares its memory with the whole line.
		seen[strings.Clone(row.authID)] = row.line
		rep.sum(row.amount).addFile(row.amount.Minor)
		if first == "" || row.date < first {
			first = row.date
		}
		last = max(last, row.date)
		if pending = append(pending, row); len(pending) == settlementBatch {
			if err := rep.match(ctx, src, pending); err != nil {
				return nil, err
			}
			pending = pending[:0]
		}
	}
	if err := rep.match(ctx, src, pending); err != nil {
		return nil, err
	}
	rep.From, rep.To = first, last
	if first != "" {
		if err := rep.missingInFile(ctx, src, seen); err != nil {
			return nil, err
		}
	}
	rep.finishTotals()
	rep.sortItems()
	return rep, nil
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

// match compares a batch of rows with their CARD_SETTLE entries.
func (r *SettlementReport) match(ctx context.Context, src SettlementSource, rows []settlementRow) error {
	if len(rows) == 0 {
		return nil
	}
	ids := make([]string, len(rows))
	for i, row := range rows {
		ids[i] = row.authID
	}
	found, err := src.SettlementsByAuth(ctx, ids)
	if err != nil {
		return err
	}
	if len(found) != len(rows) {
		return fmt.Errorf("reconcile: asked for %d authorizations, the ledger answered %d", len(rows), len(found))
	}
	for i, row := range rows {
		s := &found[i]
		item := SettlementItem{Line: row.line, MessageID: row.messageID, AuthID: row.authID, Date: row.date,
			FileAmount: &row.amount, FileCurrency: row.amount.Currency.Code}
		if !s.Found {
			item.Category, item.Detail = CategoryMissingInLedger, notSettledDetail(s.AuthStatus)
			r.add(item)
			continue
		}
		item.describeEntry(s)
		ledgerAmount, detail := compareSettlement(row.amount, s)
		item.LedgerAmount = ledgerAmount
		if detail != "" {
			item.Category, item.Detail = CategoryAmountDiffers, detail
			r.add(item)
			continue
		}
		r.Counts.Matched++
		r.sum(row.amount).addMatched(row.amount.Minor)
	}
	return nil
}

// notSettledDetail says why an authorization has no CARD_SETTLE entry.
func notSettledDetail(status string) string {
	switch status {
	case "":
		return "no such authorization in the ledger"
	case network.AuthOpen:
		return "the authorization is open: the ledger has no clearing for it yet"
	case network.AuthReversed, network.AuthExpired:
		return fmt.Sprintf("the authorization was %s, never cleared", strings.ToLower(status))
	default:
		return fmt.Sprintf("the authorization is %s but the ledger has no CARD_SETTLE entry for it", status)
	}
}

// compareSettlement compares the file's amount with the network's amount
// recorded on the entry; detail is empty when they are equal.
func compareSettlement(file postings.Money, s *network.Settlement) (*postings.Money, string) {
	cur, err := postings.LookupCurrency(s.TxnCurrency)
	if err != nil {
		return nil, fmt.Sprintf("the ledger entry does not record the network's currency (txn_currency %q)", truncateText(s.TxnCurrency, 8))
	}
	minor, err := strconv.ParseInt(s.TxnAmount, 10, 64)
	if err != nil || minor <= 0 {
		return nil, fmt.Sprintf("the ledger entry does not record the network's amount (txn_amount %q)", truncateText(s.TxnAmount, 24))
	}
	ledgerAmount := money(minor, cur)
	switch {
	case cur.Code != file.Currency.Code:
		return &ledgerAmount, fmt.Sprintf("currency differs: the file has %s, the ledger %s", file, ledgerAmount)
	case minor != file.Minor:
		diff := money(file.Minor-minor, cur) // both are at most AmountMinorMax: no overflow
		return &ledgerAmount, fmt.Sprintf("amount differs: the file has %s, the ledger %s (file − ledger = %s)", file, ledgerAmount, diff)
	}
	return &ledgerAmount, ""
}

// describeEntry copies the entry's identity into the item.
func (it *SettlementItem) describeEntry(s *network.Settlement) {
	it.ShopNo, it.Seq, it.CardNo, it.LedgerMessageID = s.ShopNo, s.Seq, s.CardNo, s.MessageID
	it.LedgerCurrency = s.TxnCurrency
	ts := s.CreatedAt
	it.LedgerTime = &ts
}

// missingInFile pages through the CARD_SETTLE entries of the file's days
// and reports those whose authorization no row named.
func (r *SettlementReport) missingInFile(ctx context.Context, src SettlementSource, seen map[string]int64) error {
	from, err := time.Parse(time.DateOnly, r.From)
	if err != nil {
		return err
	}
	to, err := time.Parse(time.DateOnly, r.To)
	if err != nil {
		return err
	}
	to = to.AddDate(0, 0, 1)
	var cursor network.SettlementCursor
	for {
		page, err := src.SettlementsBetween(ctx, from, to, cursor, settlementBatch)
		if err != nil {
			return err
		}
		for i := range page {
			s := &page[i]
			if seen[s.AuthID] != 0 {
				continue
			}
			item := SettlementItem{Category: CategoryMissingInFile, AuthID: s.AuthID,
				Detail: fmt.Sprintf("cleared in the ledger on %s; the file has no row for it", s.CreatedAt.Format(time.DateOnly))}
			item.describeEntry(s)
			if cur, err := postings.LookupCurrency(s.TxnCurrency); err == nil {
				if minor, err := strconv.ParseInt(s.TxnAmount, 10, 64); err == nil {
					m := money(minor, cur)
					item.LedgerAmount = &m
				}
			}
			r.add(item)
		}
		if len(page) < settlementBatch {
			return nil
		}
		last := page[len(page)-1]
		cursor = network.SettlementCursor{CreatedAt: last.CreatedAt, EntryID: last.EntryID}
	}
}

// add counts an item and lists it while there is room.
func (r *SettlementReport) add(it SettlementItem) {
	switch it.Category {
	case CategoryAmountDiffers:
		r.Counts.AmountDiffers++
	case CategoryMissingInLedger:
		r.Counts.MissingInLedger++
	case CategoryMissingInFile:
		r.Counts.MissingInFile++
	case CategoryDuplicateInFile:
		r.Counts.DuplicateInFile++
	case CategoryInvalidRow:
		r.Counts.InvalidRow++
	default:
		panic("reconcile: unknown category " + it.Category)
	}
	if len(r.Items) >= settlementItemsMax {
		r.ItemsOmitted++
		return
	}
	r.Items = append(r.Items, it)
}

// categoryRank orders a report's items: money first, then what is
// missing, then the file's own faults.
var categoryRank = map[string]int{CategoryAmountDiffers: 0, CategoryMissingInLedger: 1, CategoryMissingInFile: 2,
	CategoryDuplicateInFile: 3, CategoryInvalidRow: 4}

// sortItems orders the items by category, then by the file's line, then by
// the ledger's time.
func (r *SettlementReport) sortItems() {
	sort.SliceStable(r.Items, func(i, j int) bool {
		a, b := &r.Items[i], &r.Items[j]
		if ra, rb := categoryRank[a.Category], categoryRank[b.Category]; ra != rb {
			return ra < rb
		}
		return a.Line < b.Line
	})
}

// settlementSum accumulates one currency's totals exactly.
type settlementSum struct {
	cur                 postings.Currency
	fileRows, matchRows int64
	file, matched       big.Int
}

func (r *SettlementReport) sum(m postings.Money) *settlementSum {
	s := r.totals[m.Currency.Code]
	if s == nil {
		s = &settlementSum{cur: m.Currency}
		r.totals[m.Currency.Code] = s
		r.Totals = append(r.Totals, SettlementTotal{Currency: m.Currency.Code})
	}
	return s
}

func (s *settlementSum) addFile(minor int64) {
	s.fileRows++
	s.file.Add(&s.file, big.NewInt(minor))
}

func (s *settlementSum) addMatched(minor int64) {
	s.matchRows++
	s.matched.Add(&s.matched, big.NewInt(minor))
}

func (r *SettlementReport) finishTotals() {
	for i := range r.Totals {
		t := &r.Totals[i]
		s := r.totals[t.Currency]
		t.FileRows, t.MatchedRows = s.fileRows, s.matchRows
		t.FileAmount = json.Number(formatBig(&s.file, s.cur))
		t.MatchedAmount = json.Number(formatBig(&s.matched, s.cur))
	}
}

// formatBig writes minor units of cur as a decimal, like
// postings.FormatMinor, for sums beyond int64.
func formatBig(n *big.Int, cur postings.Currency) string {
	if n.IsInt64() {
		return postings.FormatMinor(n.Int64(), cur)
	}
	digits := new(big.Int).Abs(n).String()
	exp := int(cur.Exponent)
	if exp > 0 {
		digits = digits[:len(digits)-exp] + "." + digits[len(digits)-exp:] // beyond int64: more digits than exp
	}
	if n.Sign() < 0 {
		return "-" + digits
	}
	return digits
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

// WriteText prints the report for a person: each row or entry to act on,
// the totals per currency, the counts and a verdict.
func (r *SettlementReport) WriteText(w io.Writer) error {
	span := "no readable dates"
	if r.From != "" {
		span = fmt.Sprintf("dated %s to %s", r.From, r.To)
	}
	fmt.Fprintf(w, "Settlement file: %d rows, %s\n\n", r.Rows, span)
	if len(r.Items) > 0 {
		tb := newTable([]string{"CATEGORY", "LINE", "AUTH ID", "MESSAGE ID", "DATE", "FILE AMOUNT", "LEDGER AMOUNT", "SHOP", "ENTRY", "DETAIL"},
			1, 5, 6, 8)
		for _, it := range r.Items {
			line, entry, msg := "", "", it.MessageID
			if it.Line > 0 {
				line = strconv.FormatInt(it.Line, 10)
			}
			if it.Seq > 0 {
				entry = strconv.FormatInt(it.Seq, 10)
			}
			if msg == "" {
				msg = it.LedgerMessageID
			}
			tb.add(it.Category, line, it.AuthID, msg, it.Date, moneyText(it.FileAmount), moneyText(it.LedgerAmount),
				it.ShopNo, entry, it.Detail)
		}
		if err := tb.write(w); err != nil {
			return err
		}
		if r.ItemsOmitted > 0 {
			fmt.Fprintf(w, "… and %d more, not listed (the counts below include them)\n", r.ItemsOmitted)
		}
		fmt.Fprintln(w)
	}
	if len(r.Totals) > 0 {
		tb := newTable([]string{"CURRENCY", "FILE ROWS", "FILE AMOUNT", "MATCHED ROWS", "MATCHED AMOUNT"}, 1, 2, 3, 4)
		for _, t := range r.Totals {
			tb.add(t.Currency, strconv.FormatInt(t.FileRows, 10), string(t.FileAmount), strconv.FormatInt(t.MatchedRows, 10), string(t.MatchedAmount))
		}
		if err := tb.write(w); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	c := r.Counts
	fmt.Fprintf(w, "%s %d, %s %d, %s %d, %s %d, %s %d, %s %d\n", CategoryMatched, c.Matched, CategoryAmountDiffers, c.AmountDiffers,
		CategoryMissingInLedger, c.MissingInLedger, CategoryMissingInFile, c.MissingInFile,
		CategoryDuplicateInFile, c.DuplicateInFile, CategoryInvalidRow, c.InvalidRow)
	if r.OK() {
		_, err := fmt.Fprintf(w, "OK: every row matched and the ledger has no clearing of the file's days that the file lacks\n")
		return err
	}
	toAct := c.AmountDiffers + c.MissingInLedger + c.MissingInFile + c.DuplicateInFile + c.InvalidRow
	_, err := fmt.Fprintf(w, "FAILED: %d of %d rows and entries need attention\n", toAct, r.Rows+c.MissingInFile)
	return err
}

func moneyText(m *postings.Money) string {
	if m == nil {
		return ""
	}
	return m.String()
}

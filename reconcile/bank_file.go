package reconcile

import (
	"fmt"
	"strings"

	"github.com/paygate/gateway/postings"
)

// bankReferenceMax is a deposit's reference's bound (internal/deposit's
// BankReferenceMax: ISO 20022's end-to-end identification).
const bankReferenceMax = 35

// parseBankRow reads one bank line; problem is empty when it is valid. What
// could be read is returned either way, for the report; a field that is
// not what it should be is never echoed raw (%q escapes it).
func parseBankRow(line int64, rec []string, readErr error) (row bankRow, problem string) {
	row.line = line
	if readErr != nil {
		return row, csvProblem(rec, readErr, bankHeader)
	}
	for i := range rec {
		rec[i] = strings.TrimSpace(rec[i])
	}
	if len(rec[3]) <= bankReferenceMax && postings.IsRefText(rec[3]) {
		row.reference = rec[3]
	} else {
		return row, fmt.Sprintf("reference: must be 1 to %d characters of [A-Za-z0-9_.:-] (a deposit's bank reference, "+
			"with a bank's / or space written -)", bankReferenceMax)
	}
	day, err := postings.ParseDay("value_date", rec[0])
	if err != nil {
		return row, fmt.Sprintf("value_date %q: %s", truncateText(rec[0], 40), postings.AsError(err).Message)
	}
	row.day, row.valueDate = day, rec[0]
	cur, err := postings.LookupCurrency(rec[2])
	if err != nil {
		return row, fmt.Sprintf("currency %q: %s", truncateText(rec[2], 8), postings.AsError(err).Message)
	}
	minor, err := postings.ParseAmount(rec[1], cur)
	if err != nil {
		return row, fmt.Sprintf("amount %q: %s (a statement of credits: a deposit is a positive amount)",
			truncateText(rec[1], 40), postings.AsError(err).Message)
	}
	row.amount = money(minor, cur)
	return row, ""
}

package reconcile

import (
	"fmt"

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
	if problem = trimCells(rec, readErr, bankHeader); problem != "" {
		return row, problem
	}
	if len(rec[3]) <= bankReferenceMax && postings.IsRefText(rec[3]) {
		row.reference = rec[3]
	} else {
		return row, fmt.Sprintf("reference: must be 1 to %d characters of [A-Za-z0-9_.:-] (a deposit's bank reference, "+
			"with a bank's / or space written -)", bankReferenceMax)
	}
	if row.day, problem = dateCell("value_date", rec[0]); problem != "" {
		return row, problem
	}
	row.valueDate = rec[0]
	row.amount, problem = moneyCells(rec[1], rec[2], " (a statement of credits: a deposit is a positive amount)")
	return row, problem
}

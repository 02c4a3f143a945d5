package postings

import (
	"fmt"
	"time"
)

// BillFileName is the file name of a bill export, the one rule for the
// API's CSV (GET /shop/bill, Content-Disposition) and the console's
// download: bill_<shopNo>_<startDate>_<endDate>.csv, the days as given
// (both included), and _p<page>_s<size> before the extension for one page
// of the API's (page 0: the whole range). Finance files both exports side
// by side; two names for one bill made them look like two documents
// (issue 29, finding 6). It lives here, the leaf both surfaces import, so
// that it does not move with the bill's package.
func BillFileName(shopNo string, start, end time.Time, page, size int) string {
	name := fmt.Sprintf("bill_%s_%s_%s", shopNo, start.Format(DayLayout), end.Format(DayLayout))
	if page > 0 {
		name += fmt.Sprintf("_p%d_s%d", page, size)
	}
	return name + ".csv"
}

package postings

import (
	"strings"
	"time"
)

// ReportFileName is the file name of a report export, the one rule for the
// API's CSV (Content-Disposition), the console's download and the CLI's
// default output, as BillFileName is for the bill:
// <report>_<shopNo>_<startDate>_<endDate>_<zone>[_<currency>].csv, with
// "-totals" after the report's name for its totals file. The zone is always
// named (a day in Paris is not a day in UTC: two documents), with "/"
// written "-" (Europe/Paris → Europe-Paris); the currency only when the
// report was narrowed to one. zone is an IANA name as validated at the door
// ([A-Za-z0-9/_+-]), "" meaning UTC.
func ReportFileName(report, shopNo string, start, end time.Time, zone, currency string, totals bool) string {
	if zone == "" {
		zone = "UTC"
	}
	name := report
	if totals {
		name += "-totals"
	}
	name += "_" + shopNo + "_" + start.Format(DayLayout) + "_" + end.Format(DayLayout) + "_" + strings.ReplaceAll(zone, "/", "-")
	if currency != "" {
		name += "_" + currency
	}
	return name + ".csv"
}

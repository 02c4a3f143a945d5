package console_test

import (
	"testing"
	"time"
)

// The console's bill download is named as the API's export of the same
// range (api/bill_test.go checks the API's): one bill, one file name, so
// that finance does not file two documents (issue 29, finding 6).
func TestBillCSVIsNamedAsTheAPIs(t *testing.T) {
	f := newFixture(t)
	b := newBrowser(t)
	b.login(t, f, "ann.admin", "")
	day := time.Now().UTC().Format("2006-01-02")
	got := eval[string](t, b, `fetch('/bill.csv?startDate=`+day+`&endDate=`+day+`').then(r => r.headers.get('Content-Disposition'))`)
	if want := "attachment; filename=bill_" + f.a.ShopNo + "_" + day + "_" + day + ".csv"; got != want {
		t.Errorf("Content-Disposition %q, want the API's %q", got, want)
	}
}

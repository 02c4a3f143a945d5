package api

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/paygate/gateway/postings"
)

// fuzzContext is a gin context of a GET with rawQuery and headers.
func fuzzContext(path, rawQuery string, h http.Header) *gin.Context {
	gin.SetMode(gin.ReleaseMode)
	c, _ := gin.CreateTestContext(httptest.NewRecorder())
	c.Request = &http.Request{Method: "GET", URL: &url.URL{Path: path, RawQuery: rawQuery}, Header: h}
	return c
}

// mustName400 fails unless err is a 400 naming one of the names.
func mustName400(t *testing.T, err error, names ...string) {
	t.Helper()
	if e, o := classify(err); o.status != 400 || !slices.Contains(names, e.Field) {
		t.Fatalf("refusal is not a 400 naming one of %v: %#v", names, err)
	}
}

// FuzzBillFilter: no panic; a refusal is a 400 naming type, cardNo or
// currency; what is accepted is kinds of the enum, each once, a card token
// and a known currency.
func FuzzBillFilter(f *testing.F) {
	for _, seed := range []string{"type=DEPOSIT", "type=CARD_AUTH,CARD_SETTLE&type=FX", "type=", "type=,", "type=deposit",
		"cardNo=crd_abc&currency=USD", "cardNo=a%20b", "cardNo=&currency=", "currency=usd", "type=FX&type=FX,FX",
		"cardNo=crd_a&cardNo=crd_b", "type=%00", "type=DEPOSIT%2CFX"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, rawQuery string) {
		fl, err := parseBillFilter(fuzzContext("/shop/bill/list", rawQuery, http.Header{}))
		if err != nil {
			mustName400(t, err, "type", "cardNo", "currency")
			return
		}
		for i, k := range fl.Kinds {
			if !k.Valid() || slices.Contains(fl.Kinds[:i], k) {
				t.Fatalf("accepted kinds %v", fl.Kinds)
			}
		}
		if fl.CardNo != "" && !postings.IsRefText(fl.CardNo) {
			t.Fatalf("accepted cardNo %q", fl.CardNo)
		}
		if _, err := postings.LookupCurrency(fl.Currency); fl.Currency != "" && err != nil {
			t.Fatalf("accepted currency %q", fl.Currency)
		}
	})
}

// FuzzCardListQuery: no panic; a refusal is a 400 naming a parameter; what
// is accepted is within the bounds, a status of the enum, a known currency
// and a day range in order.
func FuzzCardListQuery(f *testing.F) {
	for _, seed := range []string{"", "page=2&size=500", "status=FROZEN&currency=EUR", "createdFrom=2026-01-01&createdTo=2025-12-31",
		"createdFrom=2026-02-30", "createdTo=0000-01-01", "size=501", "page=0", "status=frozen", "currency=XXX&status=ACTIVE"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, rawQuery string) {
		q, err := parseCardListQuery(fuzzContext("/shop/card/list", rawQuery, http.Header{}))
		if err != nil {
			mustName400(t, err, "page", "size", "status", "currency", "createdFrom", "createdTo")
			return
		}
		fl := q.filter
		if q.page < 1 || q.page > cardListPageMax || q.size < 1 || q.size > cardListSizeMax ||
			(fl.Status != "" && !slices.Contains(cardStatuses, fl.Status)) ||
			(!fl.CreatedFrom.IsZero() && !fl.CreatedTo.IsZero() && !fl.CreatedTo.After(fl.CreatedFrom)) {
			t.Fatalf("accepted %+v", q)
		}
		if _, err := postings.LookupCurrency(fl.Currency); fl.Currency != "" && err != nil {
			t.Fatalf("accepted currency %q", fl.Currency)
		}
	})
}

// FuzzAPIVersionHeader: no panic; a refused version is a 400 naming
// X-Api-Version; an accepted one is in the table, and the answer says it.
func FuzzAPIVersionHeader(f *testing.F) {
	for _, seed := range []string{"2026-11-23", "2099-01-01", "2026-1-23", "2026-02-30", "", "latest", "2026-11-23\x00", "２０２６-11-23"} {
		f.Add(seed)
	}
	table := withTestVersion()
	f.Fuzz(func(t *testing.T, v string) {
		c := fuzzContext("/shop/account", "", http.Header{"X-Api-Version": {v}})
		withAPIVersion(table)(c)
		rec := c.Writer
		_, name, ok := servedVersion(c)
		if !ok {
			t.Fatal("a /shop request without a version state")
		}
		if _, known := table.index(v); known {
			if rec.Status() == 400 || name != v {
				t.Fatalf("%q refused or served at %q", v, name)
			}
			return
		}
		if !c.IsAborted() || rec.Status() != 400 || rec.Header().Get("X-Api-Version") != table.current() {
			t.Fatalf("%q: status %d, aborted %v, served at %q", v, rec.Status(), c.IsAborted(), rec.Header().Get("X-Api-Version"))
		}
	})
}

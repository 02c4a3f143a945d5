package api

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// The bill's filters over HTTPS: type (repeated or comma-separated),
// cardNo and currency keep exactly the lines of the unfiltered bill that
// pass them, in order, paged alike in JSON and CSV; another merchant's card
// answers byte for byte what an unknown card answers (an empty bill); every
// bad value is a 400 naming its parameter.
func TestBillFilters(t *testing.T) {
	now, today := todayClock()
	s := newTestServer(t, serverOptions{ledgerNow: now})
	sh := s.fundedShop()
	other := s.fundedShop()
	usd := s.createCard(sh, `{"bin":"453201","currency":"USD","amount":"12.50"}`)
	eur := s.createCard(sh, `{"bin":"453202","currency":"EUR","amount":"3.00"}`)
	foreign := s.createCard(other, `{"bin":"453201","currency":"USD","amount":"1.00"}`)
	for i := 0; i < 5; i++ {
		s.request(&sh, "POST", "/shop/card/transfer", `{"cardNo":"`+usd.CardNo+`","amount":"1.00","currency":"USD","direction":"IN"}`).must(t, 200, 200)
		s.request(&sh, "POST", "/shop/card/transfer", `{"cardNo":"`+eur.CardNo+`","amount":"0.50","currency":"EUR","direction":"OUT"}`).must(t, 200, 200)
		s.deposit(sh, "EUR", 1_00)
	}
	all := s.billAll(sh, today, today)
	keep := func(pass func(l billLineOut) bool) []billLineOut {
		out := []billLineOut{}
		for _, l := range all {
			if pass(l) {
				out = append(out, l)
			}
		}
		return out
	}
	base := billPath(today, today)
	cases := []struct {
		query string
		want  []billLineOut
	}{
		{"&type=DEPOSIT", keep(func(l billLineOut) bool { return l.Type == "DEPOSIT" })},
		{"&type=CARD_TRANSFER_IN,CARD_FUND", keep(func(l billLineOut) bool { return l.Type == "CARD_TRANSFER_IN" || l.Type == "CARD_FUND" })},
		{"&type=CARD_TRANSFER_IN&type=CARD_FUND&type=CARD_FUND", keep(func(l billLineOut) bool { return l.Type == "CARD_TRANSFER_IN" || l.Type == "CARD_FUND" })},
		{"&currency=EUR", keep(func(l billLineOut) bool { return l.Currency == "EUR" })},
		{"&cardNo=" + usd.CardNo, keep(func(l billLineOut) bool { return l.CardNo == usd.CardNo })},
		{"&cardNo=" + eur.CardNo + "&type=CARD_TRANSFER_OUT&currency=EUR", keep(func(l billLineOut) bool {
			return l.CardNo == eur.CardNo && l.Type == "CARD_TRANSFER_OUT" && l.Currency == "EUR"
		})},
		{"&type=REMIT_SETTLE", []billLineOut{}},
		{"&currency=GBP", []billLineOut{}},
		{"&cardNo=" + foreign.CardNo, []billLineOut{}},
	}
	for _, c := range cases {
		got := s.bill(sh, base+c.query+"&size=500")
		if got.Total != int64(len(c.want)) || !reflect.DeepEqual(got.List, c.want) {
			t.Errorf("%s: total %d, %d lines, want %d", c.query, got.Total, len(got.List), len(c.want))
		}
		if len(c.want) > 3 {
			if p := s.bill(sh, base+c.query+"&page=2&size=3"); !reflect.DeepEqual(p.List, c.want[3:min(6, len(c.want))]) {
				t.Errorf("%s page 2 of 3: %+v", c.query, p.List)
			}
		}
		// The CSV holds the same lines, whole range and one page.
		h, recs := s.billCSV(sh, base+c.query)
		if h.Get("X-Total-Count") != itoa(len(c.want)) || len(recs) != len(c.want)+1 {
			t.Errorf("%s CSV: X-Total-Count %s, %d records, want %d", c.query, h.Get("X-Total-Count"), len(recs)-1, len(c.want))
		}
		for i, l := range c.want {
			if i+1 < len(recs) && !reflect.DeepEqual(recs[i+1], l.csvRecord()) {
				t.Errorf("%s CSV line %d: %v, want %v", c.query, i, recs[i+1], l.csvRecord())
			}
		}
	}
	if n := len(cases[0].want); n != 7 { // fundedShop's two and five
		t.Fatalf("%d deposits: the bill is not what the test built", n)
	}

	// Another merchant's card and an unknown card: the same answer.
	a := s.request(&sh, "GET", base+"&cardNo="+foreign.CardNo, "").must(t, 200, 200)
	b := s.request(&sh, "GET", base+"&cardNo=crd_"+strings.Repeat("0", 20), "").must(t, 200, 200)
	if string(a.raw) != string(b.raw) || string(a.Data) != `{"total":0,"list":[]}` {
		t.Errorf("foreign card %s, unknown card %s", a.raw, b.raw)
	}

	for _, c := range []struct{ query, field string }{
		{"&type=BOGUS", "type"},
		{"&type=deposit", "type"},
		{"&type=", "type"},
		{"&type=DEPOSIT,", "type"},
		{"&type=DEPOSIT,%20FX", "type"},
		{"&type=" + strings.Repeat("FX,", 65) + "FX", "type"},
		{"&cardNo=a%20b", "cardNo"},
		{"&cardNo=", "cardNo"},
		{"&cardNo=" + strings.Repeat("x", 65), "cardNo"},
		{"&cardNo=crd_a&cardNo=crd_b", "cardNo"},
		{"&currency=usd", "currency"},
		{"&currency=XXX", "currency"},
		{"&currency=EUR&currency=USD", "currency"},
	} {
		a := s.request(&sh, "GET", base+c.query, "").must(t, 400, 400)
		if !strings.HasPrefix(a.Message, c.field+": ") {
			t.Errorf("%s: message %q does not name %s", c.query, a.Message, c.field)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

package api

import (
	"strings"
	"testing"
)

type cardListOut struct {
	Total int64     `json:"total"`
	List  []cardOut `json:"list"`
}

func (s *testServer) cardList(sh shop, query string) cardListOut {
	s.t.Helper()
	var out cardListOut
	a := s.request(&sh, "GET", "/shop/card/list?"+query, "").must(s.t, 200, 200)
	a.into(s.t, &out)
	if out.List == nil {
		s.t.Fatalf("list is not an array: %s", a.raw)
	}
	return out
}

// The card list over HTTPS: the merchant's cards in issue order, the same
// object as /shop/card/info, every filter, pages that a new card does not
// move, and never another merchant's card.
func TestCardList(t *testing.T) {
	// The cards are issued on the day the test started, even past
	// midnight: the createdFrom/createdTo cases ask for that day.
	now, today := todayClock()
	s := newTestServer(t, serverOptions{ledgerNow: now})
	sh := s.fundedShop()
	other := s.fundedShop()
	var issued []cardOut
	for i := 0; i < 7; i++ {
		body := `{"bin":"453201","currency":"USD","amount":"1.00"}`
		if i%3 == 2 {
			body = `{"bin":"453202","currency":"EUR","amount":"2.00"}`
		}
		issued = append(issued, s.createCard(sh, body))
		s.createCard(other, `{"bin":"453201","currency":"USD","amount":"1.00"}`)
	}
	s.request(&sh, "POST", "/shop/card/freeze", `{"cardNo":"`+issued[1].CardNo+`"}`).must(t, 200, 200)
	s.request(&sh, "POST", "/shop/card/cancel", `{"cardNo":"`+issued[4].CardNo+`"}`).must(t, 200, 200)

	nos := func(l cardListOut) string {
		var out []string
		for _, c := range l.List {
			out = append(out, c.CardNo)
		}
		return strings.Join(out, ",")
	}
	pick := func(idx ...int) string {
		var out []string
		for _, i := range idx {
			out = append(out, issued[i].CardNo)
		}
		return strings.Join(out, ",")
	}
	all := s.cardList(sh, "")
	if all.Total != 7 || nos(all) != pick(0, 1, 2, 3, 4, 5, 6) {
		t.Fatalf("list: total %d, %s", all.Total, nos(all))
	}
	// The same object as /shop/card/info.
	info := s.request(&sh, "GET", "/shop/card/info?cardNo="+issued[1].CardNo, "").must(t, 200, 200)
	listed := s.request(&sh, "GET", "/shop/card/list?page=2&size=1", "").must(t, 200, 200)
	if want := `{"total":7,"list":[` + string(info.Data) + `]}`; string(listed.Data) != want {
		t.Errorf("page 2 of size 1:\n%s\nwant\n%s", listed.Data, want)
	}
	tomorrow := dayAfter(t, today, 1)
	for _, c := range []struct {
		query string
		total int64
		want  string
	}{
		{"page=2&size=3", 7, pick(3, 4, 5)},
		{"page=3&size=3", 7, pick(6)},
		{"page=4&size=3", 7, ""},
		{"status=ACTIVE", 5, pick(0, 2, 3, 5, 6)},
		{"status=FROZEN", 1, pick(1)},
		{"status=CANCELLED&currency=USD", 1, pick(4)},
		{"currency=EUR", 2, pick(2, 5)},
		{"currency=GBP", 0, ""},
		{"createdFrom=" + today + "&createdTo=" + today, 7, pick(0, 1, 2, 3, 4, 5, 6)},
		{"createdFrom=" + tomorrow, 0, ""},
		{"createdTo=2020-01-01", 0, ""},
		{"status=ACTIVE&currency=USD&size=2&page=2", 3, pick(6)},
	} {
		got := s.cardList(sh, c.query)
		if got.Total != c.total || nos(got) != c.want {
			t.Errorf("%s: total %d %s, want %d %s", c.query, got.Total, nos(got), c.total, c.want)
		}
	}
	// A card issued later lands after the last page.
	page2 := s.cardList(sh, "page=2&size=3")
	s.createCard(sh, `{"bin":"453201","currency":"USD","amount":"1.00"}`)
	if again := s.cardList(sh, "page=2&size=3"); nos(again) != nos(page2) || again.Total != 8 {
		t.Errorf("a new card moved page 2: %s → %s", nos(page2), nos(again))
	}
	// The other merchant sees only its own seven cards.
	if o := s.cardList(other, "size=500"); o.Total != 7 || strings.Contains(nos(o), issued[0].CardNo) {
		t.Errorf("the other merchant's list: %d %s", o.Total, nos(o))
	}

	// Every bad value is a 400 naming its parameter.
	for _, c := range []struct{ query, field string }{
		{"page=0", "page"},
		{"page=1000001", "page"},
		{"page=-1", "page"},
		{"page=1&page=2", "page"},
		{"size=0", "size"},
		{"size=501", "size"},
		{"size=1e2", "size"},
		{"status=active", "status"},
		{"status=", "status"},
		{"status=ACTIVE&status=FROZEN", "status"},
		{"currency=usd", "currency"},
		{"currency=XXX", "currency"},
		{"currency=US", "currency"},
		{"createdFrom=2026-02-30", "createdFrom"},
		{"createdFrom=0000-01-01", "createdFrom"},
		{"createdFrom=", "createdFrom"},
		{"createdTo=26-01-01", "createdTo"},
		{"createdTo=2026-01-01T00:00:00Z", "createdTo"},
		{"createdFrom=2026-03-02&createdTo=2026-03-01", "createdTo"},
	} {
		a := s.request(&sh, "GET", "/shop/card/list?"+c.query, "").must(t, 400, 400)
		if !strings.HasPrefix(a.Message, c.field+": ") {
			t.Errorf("%s: message %q does not name %s", c.query, a.Message, c.field)
		}
	}
}

package console_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/paygate/gateway/internal/console"
	"github.com/paygate/gateway/postings"
)

// Adjustments in the console (issue 29 point 4), over plain HTTP, as the
// CLI runs them: an operator proposes, the same operator cannot approve
// (the store's maker–checker), another approves and the entry is posted
// once; a reversal is proposed and rejected; another merchant's proposal
// is the 404 of an unknown one; the form's refusals name the field; the
// auditor reads the list and acts on nothing; every step is a trail row
// under the CLI's action names and target.
func TestHouseAdjustments(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.addUser(t, console.NewUser{Login: "otto.operator", Role: console.RoleOperator})
	olga, otto := newWebUser(t, f, "olga.operator"), newWebUser(t, f, "otto.operator")
	funding := func() int64 {
		b, err := f.g.Ledger.Balance(ctx, postings.MerchantAccount(f.a.ID, postings.AccountFunding, "USD"))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	lastID := func() string {
		ids := f.column(t, `select id::text from adjustments order by id desc limit 1`)
		if len(ids) == 0 {
			t.Fatal("no adjustment")
		}
		return ids[0]
	}
	decide := func(u *webUser, id, decision, shop string) (int, string) {
		return u.post(t, "/house/adjustments/"+id+"/"+decision, url.Values{"shopNo": {shop}})
	}

	free := url.Values{"shopNo": {f.a.ShopNo}, "mode": {"free"}, "direction": {"credit"}, "amount": {"10.00"}, "currency": {"usd"},
		"houseAccount": {"world"}, "reason": {"bank credited twice"}, "reference": {"TICKET-1"}}
	if status, body := olga.post(t, "/house/adjustments", free); status != http.StatusSeeOther {
		t.Fatalf("propose: %d\n%s", status, body)
	}
	id := lastID()
	status, page := olga.get(t, "/house/adjustments?shopNo="+f.a.ShopNo)
	for _, want := range []string{`data-id="` + id + `"`, "PROPOSED", "credit 10.00 USD against world", "bank credited twice", "TICKET-1", "olga.operator"} {
		if status != 200 || !strings.Contains(page, want) {
			t.Errorf("list: %d, no %q", status, want)
		}
	}

	before := funding()
	if status, body := decide(olga, id, "approve", f.a.ShopNo); status != http.StatusConflict || !strings.Contains(body, "maker–checker") {
		t.Errorf("the maker's own approval: %d\n%s", status, body)
	}
	_, unknown := decide(otto, "999999", "approve", f.a.ShopNo)
	for _, tc := range []struct{ id, decision, shop string }{
		{id, "approve", f.b.ShopNo}, // another merchant's proposal
		{"999999", "approve", f.a.ShopNo},
		{id, "approve", "SHOP_UNKNOWN_1"},
		{id, "settle", f.a.ShopNo},
		{"x", "reject", f.a.ShopNo},
	} {
		if status, body := decide(otto, tc.id, tc.decision, tc.shop); status != http.StatusNotFound || body != unknown {
			t.Errorf("%s %s of %s: %d, not the unknown one's 404", tc.decision, tc.id, tc.shop, status)
		}
	}
	if funding() != before {
		t.Fatal("a refused decision moved money")
	}
	if status, body := decide(otto, id, "approve", f.a.ShopNo); status != http.StatusSeeOther {
		t.Fatalf("approve: %d\n%s", status, body)
	}
	// Approved again (a double click): the store answers the approved
	// proposal, as a replay; the entry is posted once (the balance below).
	if status, _ := decide(otto, id, "approve", f.a.ShopNo); status != http.StatusSeeOther {
		t.Errorf("approved twice: %d", status)
	}
	if got := funding(); got != before+1000 {
		t.Errorf("funding %d after the approval, want %d", got, before+1000)
	}
	if got := f.column(t, `select status || ' ' || decided_login || ' ' || (entry_seq is not null)::text from adjustments where id = $1`, id); got[0] != "APPROVED otto.operator true" {
		t.Errorf("the approved row: %v", got)
	}

	// A reversal of the merchant's first deposit, rejected: nothing moves.
	rev := url.Values{"shopNo": {f.a.ShopNo}, "mode": {"reversal"}, "reverses": {"1"}, "reason": {"deposit not received"}, "reference": {"TICKET-2"}}
	if status, body := otto.post(t, "/house/adjustments", rev); status != http.StatusSeeOther {
		t.Fatalf("propose a reversal: %d\n%s", status, body)
	}
	rid := lastID()
	if status, body := decide(olga, rid, "reject", f.a.ShopNo); status != http.StatusSeeOther {
		t.Fatalf("reject: %d\n%s", status, body)
	}
	if got := f.column(t, `select status from adjustments where id = $1`, rid); got[0] != "REJECTED" || funding() != before+1000 {
		t.Errorf("the rejected reversal: %v, funding %d", got, funding())
	}

	with := func(k, v string) url.Values {
		form := url.Values{}
		for key, vs := range free {
			form[key] = vs
		}
		form.Set(k, v)
		return form
	}
	for _, tc := range []struct {
		form url.Values
		want string
	}{
		{with("shopNo", ""), "shopNo: required"},
		{with("shopNo", "SHOP_UNKNOWN_1"), `shopNo: no merchant has the shop number &#34;SHOP_UNKNOWN_1&#34;`},
		{with("mode", "edit"), "mode: must be reversal or free"},
		{with("mode", "reversal"), "reverses: the merchant&#39;s entry"},
		{with("currency", "ZZZ"), "currency: "},
		{with("amount", "1.001"), "amount: "},
		{with("amount", "-1"), "amount: "},
		{with("houseAccount", "fx"), "houseAccount: must be world or fee_revenue"},
		{with("direction", "sideways"), "direction: must be credit"},
		{with("reason", "ab"), "reason: must be 3 to 500 bytes"},
		{with("reference", " TICKET"), "reference: must not start or end with spaces"},
	} {
		status, body := olga.post(t, "/house/adjustments", tc.form)
		if status != http.StatusBadRequest || !strings.Contains(body, `id="form-error">`+tc.want) {
			t.Errorf("%v: %d, want 400 %q\n%s", tc.form, status, tc.want, body)
		}
	}

	aldo := newWebUser(t, f, "aldo.auditor")
	if status, page := aldo.get(t, "/house/adjustments"); status != 200 || !strings.Contains(page, `data-id="`+id+`"`) || strings.Contains(page, `id="propose"`) {
		t.Errorf("the auditor's list: %d", status)
	}
	// Pages by id, newest first: before the reversal's id, the first
	// proposal alone and a way back to the newest; a bad cursor is a 400.
	if status, page := aldo.get(t, "/house/adjustments?shopNo="+f.a.ShopNo+"&before="+rid); status != 200 ||
		!strings.Contains(page, `data-id="`+id+`"`) || strings.Contains(page, `data-id="`+rid+`"`) || !strings.Contains(page, `id="newest"`) || strings.Contains(page, `id="next"`) {
		t.Errorf("the page before %s: %d\n%s", rid, status, page)
	}
	for _, bad := range []string{"-1", "0", "x", "01", "99999999999999999999"} {
		if status, _ := aldo.get(t, "/house/adjustments?before="+bad); status != http.StatusBadRequest {
			t.Errorf("before=%s: %d, want 400", bad, status)
		}
	}
	if status, _ := aldo.post(t, "/house/adjustments", free); status != http.StatusForbidden {
		t.Errorf("the auditor proposing: %d", status)
	}
	if status, _ := newWebUser(t, f, "ann.admin").get(t, "/house/adjustments"); status != http.StatusForbidden {
		t.Errorf("a merchant's admin: %d", status)
	}

	rows := strings.Join(f.column(t, `select action || ':' || outcome || ':' || target from console_audit
		where action like 'adjustment.%' order by id`), "\n")
	a := f.a.ShopNo + " adjustment "
	want := strings.Join([]string{"adjustment.propose:ok:" + a + id, "adjustment.approve:failed:" + a + id,
		"adjustment.approve:failed:" + a + "999999", "adjustment.approve:failed:" + f.b.ShopNo + " adjustment " + id,
		"adjustment.approve:failed:" + a + "999999", "adjustment.approve:ok:" + a + id, "adjustment.approve:ok:" + a + id,
		"adjustment.propose:ok:" + a + rid, "adjustment.reject:ok:" + a + rid,
		// The domain's refusals of the form (houseAccount, direction,
		// reason, reference) are rows too, as the CLI's; the console's own
		// checks before the command are not.
		"adjustment.propose:failed:" + f.a.ShopNo, "adjustment.propose:failed:" + f.a.ShopNo,
		"adjustment.propose:failed:" + f.a.ShopNo, "adjustment.propose:failed:" + f.a.ShopNo}, "\n")
	if rows != want {
		t.Errorf("trail rows:\n%s\nwant\n%s", rows, want)
	}
}

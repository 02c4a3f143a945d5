package api

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/ledger/pgtest"
)

// testLaterVersion is a version that exists only in these tests: it renames
// the card's remark to note on GET /shop/card/info, the kind of breaking
// change that needs a version (docs/versioning.md).
var testLaterVersion = apiVersion{name: "2099-01-01", change: func(route string, data any) any {
	if route != "/shop/card/info" {
		return data
	}
	if card, ok := data.(map[string]any); ok {
		card["note"] = card["remark"]
		delete(card, "remark")
	}
	return data
}}

// withTestVersion is the gateway's table with testLaterVersion after it.
func withTestVersion() versionTable {
	return append(append(versionTable{}, apiVersions...), testLaterVersion)
}

// The version a merchant is pinned to by default is the table's current
// one: the column default of sql/ and api/versions.go agree.
func TestVersionDefaultIsCurrent(t *testing.T) {
	t.Parallel()
	db := pgtest.NewDB(t)
	var def string
	err := db.NewRaw(`select column_default from information_schema.columns
		where table_name = 'merchants' and column_name = 'api_version'`).Scan(context.Background(), &def)
	if err != nil {
		t.Fatal(err)
	}
	if want := "'" + apiVersions.current() + "'::text"; def != want {
		t.Errorf("merchants.api_version defaults to %s, want %s (api/versions.go's current version)", def, want)
	}
}

// Versions end to end, with a test-only later version served: the answer
// is rendered at the version the request names, else at the merchant's
// pinned one; every /shop answer, failures included, says its version; an
// unknown or malformed version is a 400 naming X-Api-Version.
func TestAPIVersions(t *testing.T) {
	s := newTestServer(t, serverOptions{versions: withTestVersion()})
	first, later := apiVersions[0].name, testLaterVersion.name
	old := s.fundedShop() // pinned to the column default: the first version
	pinned := s.newShop(merchant.Spec{Currencies: []string{"USD"}, APIVersion: later})
	s.deposit(pinned, "USD", 100_00)
	if old.m.APIVersion != first || pinned.m.APIVersion != later {
		t.Fatalf("pinned to %q and %q", old.m.APIVersion, pinned.m.APIVersion)
	}
	oldCard := s.createCard(old, `{"bin":"453201","currency":"USD","amount":"1.00","remark":"r1"}`)
	newCard := s.createCard(pinned, `{"bin":"453201","currency":"USD","amount":"1.00","remark":"r2"}`)

	fields := func(a *answer) map[string]any {
		var m map[string]any
		if err := json.Unmarshal(a.Data, &m); err != nil {
			t.Fatalf("%v: %s", err, a.raw)
		}
		return m
	}
	for _, c := range []struct {
		name    string
		sh      shop
		cardNo  string
		header  []string
		version string
		field   string
	}{
		{"old merchant, no header", old, oldCard.CardNo, nil, first, "remark"},
		{"old merchant asks for the later version", old, oldCard.CardNo, []string{"X-Api-Version", later}, later, "note"},
		{"pinned merchant, no header", pinned, newCard.CardNo, nil, later, "note"},
		{"pinned merchant asks for the first version", pinned, newCard.CardNo, []string{"X-Api-Version", first}, first, "remark"},
	} {
		a := s.request(&c.sh, "GET", "/shop/card/info?cardNo="+c.cardNo, "", c.header...).must(t, 200, 200)
		if got := a.header.Get("X-Api-Version"); got != c.version {
			t.Errorf("%s: served at %q, want %q", c.name, got, c.version)
		}
		m := fields(a)
		other := map[string]string{"remark": "note", "note": "remark"}[c.field]
		if _, ok := m[c.field]; !ok {
			t.Errorf("%s: no %s in %s", c.name, c.field, a.Data)
		}
		if _, ok := m[other]; ok {
			t.Errorf("%s: %s in %s", c.name, other, a.Data)
		}
		// The change is the route's alone: the balance is the same at
		// every version.
		b := s.request(&c.sh, "GET", "/shop/card/balance?cardNo="+c.cardNo, "", c.header...).must(t, 200, 200)
		if b.header.Get("X-Api-Version") != c.version || !strings.Contains(string(b.Data), `"balance":1.00`) {
			t.Errorf("%s: balance %s at %s", c.name, b.Data, b.header.Get("X-Api-Version"))
		}
	}

	// Failures say their version too: a 400, a business failure, a 404, a
	// 401 (before the merchant is known: the version named, else the
	// current one), and the CSV bill.
	echo := []struct {
		name    string
		a       *answer
		version string
	}{
		{"400 of a parameter", s.request(&pinned, "GET", "/shop/card/info", ""), later},
		{"1002", s.request(&old, "GET", "/shop/card/info?cardNo=crd_nosuchcard", ""), first},
		{"404", s.request(&old, "GET", "/shop/nothing", "", "X-Api-Version", later), later},
		{"401 naming a version", s.request(nil, "GET", "/shop/account", "", "X-Shop-No", old.creds.ShopNo, "X-Public-Key", "pk_wrong", "X-Api-Version", first), first},
		{"401", s.request(nil, "GET", "/shop/account", "", "X-Shop-No", old.creds.ShopNo, "X-Public-Key", "pk_wrong"), later},
	}
	for _, e := range echo {
		if got := e.a.header.Get("X-Api-Version"); got != e.version || e.a.Code == codeOK {
			t.Errorf("%s: code %d served at %q, want %q", e.name, e.a.Code, got, e.version)
		}
	}
	if h, _ := s.billCSV(old, billPath("2026-01-01", "2026-01-02")); h.Get("X-Api-Version") != first {
		t.Errorf("CSV served at %q", h.Get("X-Api-Version"))
	}
	resp, err := s.client.Get(s.srv.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if v := resp.Header.Get("X-Api-Version"); v != "" {
		t.Errorf("/healthz, outside /shop, says version %q", v)
	}

	// Unknown, malformed or repeated: 400 naming the header, before
	// authentication, served at the current version.
	for _, bad := range [][]string{
		{"X-Api-Version", "2030-01-01"},
		{"X-Api-Version", "2026-11-22"},
		{"X-Api-Version", "2026-1-23"},
		{"X-Api-Version", "2026-02-30"},
		{"X-Api-Version", ""},
		{"X-Api-Version", first + "x"},
		{"X-Api-Version", "latest"},
		{"X-Api-Version", first, "X-Api-Version", first},
	} {
		for _, sh := range []*shop{&old, nil} {
			a := s.request(sh, "GET", "/shop/account", "", bad...).must(t, 400, 400)
			if !strings.HasPrefix(a.Message, "X-Api-Version: ") || a.header.Get("X-Api-Version") != later {
				t.Errorf("%q: %s, served at %q", bad, a.raw, a.header.Get("X-Api-Version"))
			}
		}
	}
	// A POST with a bad version does nothing.
	before := s.journal()
	s.request(&old, "POST", "/shop/card/create", `{"bin":"453201","currency":"USD","amount":"1.00"}`, "X-Api-Version", "2030-01-01").must(t, 400, 400)
	if s.journal() != before {
		t.Error("a request with an unknown version changed the journal")
	}
}

// The gateway's own table changes no answer: asking for the current
// version gives the bytes that asking for none gives.
func TestCurrentVersionChangesNothing(t *testing.T) {
	if len(apiVersions) != 1 {
		t.Skip("the gateway serves more than one version: TestAPIVersions covers them")
	}
	s := newTestServer(t, serverOptions{})
	sh := s.fundedShop()
	k := s.createCard(sh, `{"bin":"453201","currency":"USD","amount":"1.00","remark":"r"}`)
	for _, path := range []string{"/shop/card/info?cardNo=" + k.CardNo, "/shop/account", "/shop/card/list"} {
		a := s.request(&sh, "GET", path, "")
		b := s.request(&sh, "GET", path, "", "X-Api-Version", apiVersions.current())
		if string(a.raw) != string(b.raw) || a.header.Get("X-Api-Version") != apiVersions.current() || b.header.Get("X-Api-Version") != apiVersions.current() {
			t.Errorf("%s: %s (%s) vs %s (%s)", path, a.raw, a.header.Get("X-Api-Version"), b.raw, b.header.Get("X-Api-Version"))
		}
	}
}

// render applies the changes after the first version, in order, up to the
// version served, and only those.
func TestVersionRenderChainsChanges(t *testing.T) {
	add := func(name, key string) apiVersion {
		return apiVersion{name: name, change: func(_ string, data any) any {
			m := data.(map[string]any)
			m["seen"] = m["seen"].(string) + key
			return m
		}}
	}
	tb := versionTable{{name: "2026-01-01"}, add("2026-02-01", "b"), add("2026-03-01", "c")}
	for v, want := range map[string]string{"2026-01-01": "a", "2026-02-01": "ab", "2026-03-01": "abc", "2026-04-01": "a"} {
		got := tb.render(v, "/shop/x", map[string]string{"seen": "a"})
		b, _ := json.Marshal(got)
		if !strings.Contains(string(b), `"seen":"`+want+`"`) {
			t.Errorf("at %s: %s, want seen %q", v, b, want)
		}
	}
	if tb.render("2026-03-01", "/shop/x", nil) != nil {
		t.Error("a failure's null data was changed")
	}
}

package console_test

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// auditRow is the newest row of the trail with action and outcome.
func (f *fixture) auditRow(t *testing.T, action, outcome string) (target, detail string, ok bool) {
	t.Helper()
	err := f.g.DB().DB.QueryRow(`select target, detail from console_audit where action = $1 and outcome = $2
		order by id desc limit 1`, action, outcome).Scan(&target, &detail)
	return target, detail, err == nil
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

var keyRE = regexp.MustCompile(`name="idempotencyKey" value="([^"]+)"`)

// A sanctions list uploaded under a file name of bytes PostgreSQL refuses
// (%FF, NUL) still leaves its rows — a refused file's and a loaded list's —
// with the name escaped and the original bytes' SHA-256 (before, the
// insert failed and the list was loaded with no row).
func TestSanctionsUploadWithBadFileNameIsAudited(t *testing.T) {
	f := newFixture(t)
	olga := newWebUser(t, f, "olga.operator")
	name := "list\xff\x00\u202e.csv"
	if status, _ := olga.upload(t, "/operator/sanctions", name, "name,country\nIvan Petrov,XX1\n", nil); status != http.StatusBadRequest {
		t.Fatalf("a malformed list: %d", status)
	}
	target, _, ok := f.auditRow(t, "sanctions.load", "failed")
	if !ok || !utf8.ValidString(target) || !strings.Contains(target, `list\xFF\u{0000}\u{202E}.csv`) || !strings.Contains(target, sha256Hex(name)) {
		t.Errorf("the refused upload's row: %q (found %v)", target, ok)
	}
	status, body := olga.upload(t, "/operator/sanctions", name, "name,country\nIvan Petrov,RU\n", nil)
	m := keyRE.FindStringSubmatch(body)
	if status != 200 || m == nil {
		t.Fatalf("upload: %d", status)
	}
	if status, _ := olga.post(t, "/operator/sanctions/confirm", url.Values{"idempotencyKey": {m[1]}}); status != http.StatusSeeOther {
		t.Fatalf("confirm: %d", status)
	}
	if _, detail, ok := f.auditRow(t, "sanctions.load", "ok"); !ok || !strings.Contains(detail, sha256Hex(name)) || !utf8.ValidString(detail) {
		t.Errorf("the load's row: %q (found %v)", detail, ok)
	}
}

// A request refused for its role leaves its row, whatever bytes its path
// holds.
func TestRoleRefusalsWithBadPathSegmentsAreAudited(t *testing.T) {
	f := newFixture(t)
	fred := newWebUser(t, f, "fred.finance")
	for _, tc := range []struct{ seg, raw string }{
		{"%FF", "\xff"}, {"%00", "\x00"}, {"%ED%A0%80", "\xed\xa0\x80"}, {"%E2%80%AE", "\u202e"},
	} {
		path := "/operator/merchants/" + tc.seg + "/disable"
		before := f.countRows(t, "console_audit")
		if status, _ := fred.post(t, path, nil); status != http.StatusForbidden {
			t.Errorf("%s: %d, want 403", path, status)
		}
		target, _, ok := f.auditRow(t, "request.refused", "refused")
		if f.countRows(t, "console_audit") != before+1 || !ok || !strings.Contains(target, sha256Hex("/operator/merchants/"+tc.raw+"/disable")) {
			t.Errorf("%s: refusal row %q (found %v)", path, target, ok)
		}
	}
}

// When the trail cannot take an action's row, the action does not happen:
// 503 with Retry-After, and nothing changed.
func TestAuditFailureStopsTheAction(t *testing.T) {
	f := newFixture(t)
	db := f.g.DB().DB
	if _, err := db.Exec(`create function refuse_audit() returns trigger language plpgsql as $$
		begin raise exception 'audit refused by the test'; end $$;
		create trigger refuse_audit before insert on console_audit for each row
		when (new.action in ('card.cancel', 'merchant.disable', 'merchant.deposit')) execute function refuse_audit()`); err != nil {
		t.Fatal(err)
	}
	ann := newWebUser(t, f, "ann.admin")
	olga := newWebUser(t, f, "olga.operator")
	entries := f.countRows(t, "entries")
	if status, _ := ann.post(t, "/cards/"+f.cardsA[0]+"/cancel", nil); status != http.StatusServiceUnavailable {
		t.Errorf("cancel: %d, want 503", status)
	}
	if status, _ := olga.post(t, "/operator/merchants/"+f.a.ShopNo+"/disable", nil); status != http.StatusServiceUnavailable {
		t.Errorf("disable: %d, want 503", status)
	}
	_, body := olga.post(t, "/operator/merchants/"+f.a.ShopNo+"/deposit", url.Values{"currency": {"USD"}, "amount": {"10.00"}, "bankReference": {"BANK-AUDIT-1"}})
	if m := keyRE.FindStringSubmatch(body); m == nil {
		t.Error("no deposit confirmation")
	} else if status, _ := olga.post(t, "/operator/merchants/"+f.a.ShopNo+"/deposit/confirm",
		url.Values{"currency": {"USD"}, "amount": {"10.00"}, "bankReference": {"BANK-AUDIT-1"}, "idempotencyKey": {m[1]}}); status != http.StatusServiceUnavailable {
		t.Errorf("deposit: %d, want 503", status)
	}
	var status string
	if err := db.QueryRow(`select status from merchants where id = $1`, f.a.ID).Scan(&status); err != nil {
		t.Fatal(err)
	}
	if c := f.cardStatus(t, f.cardsA[0]); c != "ACTIVE" || status != "ACTIVE" || f.countRows(t, "entries") != entries {
		t.Errorf("an action ran without its row: card %s, merchant %s, entries %d→%d", c, status, entries, f.countRows(t, "entries"))
	}
}

// An action refused at the door for its bytes is a 'refused' row naming the
// field, as a refusal for the role is (formtext.go).
func TestDoorRefusalIsAudited(t *testing.T) {
	f := newFixture(t)
	ann := newWebUser(t, f, "ann.admin")
	if status, _ := ann.post(t, "/cards/"+f.cardsA[0]+"/freeze", url.Values{"reason": {"ab\xffcd"}}); status != http.StatusBadRequest {
		t.Fatalf("freeze with %%FF: %d, want 400", status)
	}
	target, detail, ok := f.auditRow(t, "request.refused", "refused")
	if !ok || target != "/cards/"+f.cardsA[0]+"/freeze" || !strings.HasPrefix(detail, "reason: ") {
		t.Errorf("door refusal row: %q %q (found %v)", target, detail, ok)
	}
	if f.cardStatus(t, f.cardsA[0]) != "ACTIVE" {
		t.Error("the refused freeze ran")
	}
}

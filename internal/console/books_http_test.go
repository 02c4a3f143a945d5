package console_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/paygate/gateway/internal/audit"
)

// The books pages over plain HTTP (issue 30): the checkpoints list and each
// one's file, which is the CLI's encoding and checks with the public key as
// audit verify --checkpoint checks it; the closed periods, every merchant's
// for the house and a merchant's own for its admin and finance users, with
// the shop filter's and the cursor's refusals; and who may open what.
// bookClose is a merchant's period to close: kind audit.PeriodDay or
// audit.PeriodMonth.
type bookClose struct {
	merchant     int64
	kind, period string
}

// signBooks signs, with a new key, a checkpoint of every merchant's journal
// head and then the closes, as the CLI's audit checkpoint and close do; it
// answers the checkpoint and the key's public half.
func (f *fixture) signBooks(t *testing.T, closes ...bookClose) (*audit.Checkpoint, ed25519.PublicKey) {
	t.Helper()
	ctx := context.Background()
	pub, key, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	signer := audit.NewSigner(key)
	books := audit.New(f.g.Ledger)
	cp, err := books.Checkpoint(ctx, signer)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range closes {
		if _, err := books.ClosePeriod(ctx, signer, c.merchant, c.kind, c.period); err != nil {
			t.Fatal(err)
		}
	}
	return cp, pub
}

func TestBooksPages(t *testing.T) {
	f := newFixture(t)
	cp, pub := f.signBooks(t, bookClose{f.a.ID, audit.PeriodDay, "2020-01-01"}, bookClose{f.b.ID, audit.PeriodMonth, "2020-02"})
	id := f.column(t, `select id::text from audit_checkpoints`)[0]

	users := map[string]*webUser{} // one session per login: a TOTP code is accepted once
	as := func(login string) *webUser {
		if users[login] == nil {
			users[login] = newWebUser(t, f, login)
		}
		return users[login]
	}
	aldo := as("aldo.auditor")
	status, page := aldo.get(t, "/audit/checkpoints")
	for _, want := range []string{`id="checkpoints"`, cp.Time.String(), cp.KeyID, cp.Root[:8] + "…", cp.Signature[:8] + "…",
		`href="/audit/checkpoints/` + id + `/file"`} {
		if status != 200 || !strings.Contains(page, want) {
			t.Errorf("checkpoints page: %d, no %q\n%s", status, want, page)
		}
	}

	// The file is the CLI's bytes (json.MarshalIndent, a newline) and
	// checks with the public key alone.
	res, err := aldo.c.Get(f.url("/audit/checkpoints/" + id + "/file"))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(res.Body)
	res.Body.Close()
	want, _ := json.MarshalIndent(cp, "", "  ")
	if res.StatusCode != 200 || string(got) != string(want)+"\n" ||
		res.Header.Get("Content-Disposition") != "attachment; filename=checkpoint-"+id+".json" {
		t.Fatalf("checkpoint file: %d %q\n%s\nwant\n%s", res.StatusCode, res.Header.Get("Content-Disposition"), got, want)
	}
	parsed, err := audit.ParseCheckpoint(got)
	if err != nil {
		t.Fatal(err)
	}
	if ps := parsed.Check(pub); len(ps) != 0 {
		t.Errorf("the downloaded checkpoint does not check: %v", ps)
	}

	closes := func(u string) map[string]bool { // which closes a page shows
		return map[string]bool{"A": strings.Contains(u, "<td>2020-01-01</td>"), "B": strings.Contains(u, "<td>2020-02</td>")}
	}
	for _, tc := range []struct {
		login, path string
		a, b        bool
	}{
		{"aldo.auditor", "/closes", true, true},
		{"olga.operator", "/closes", true, true},
		{"olga.operator", "/closes?shopNo=" + f.a.ShopNo, true, false},
		{"fred.finance", "/closes", true, false},
		{"ann.admin", "/closes?shopNo=" + f.b.ShopNo, true, false}, // a merchant's user's filter is never read
		{"bob.admin", "/closes", false, true},
	} {
		status, page := as(tc.login).get(t, tc.path)
		if got := closes(page); status != 200 || got["A"] != tc.a || got["B"] != tc.b || !strings.Contains(page, cp.KeyID) {
			t.Errorf("%s %s: %d, shows %v, want A %v B %v", tc.login, tc.path, status, got, tc.a, tc.b)
		}
	}

	for _, tc := range []struct {
		login, path string
		status      int
		want        string
	}{
		{"aldo.auditor", "/audit/checkpoints/999999/file", 404, "Not found."},
		{"aldo.auditor", "/audit/checkpoints/x/file", 404, "Not found."},
		{"aldo.auditor", "/audit/checkpoints?before=x", 400, "before: must be an id"},
		{"aldo.auditor", "/closes?before=-1", 400, "before: must be an id"},
		{"aldo.auditor", "/closes?shopNo=SHOP_UNKNOWN_1", 400, `shopNo: no merchant has the shop number &#34;SHOP_UNKNOWN_1&#34;`},
		{"fred.finance", "/audit/checkpoints", 403, "Your role does not allow this."},
		{"fred.finance", "/audit/checkpoints/" + id + "/file", 403, "Your role does not allow this."},
		{"rita.readonly", "/closes", 403, "Your role does not allow this."},
	} {
		status, page := as(tc.login).get(t, tc.path)
		if status != tc.status || !strings.Contains(page, tc.want) {
			t.Errorf("%s %s: %d, want %d with %q\n%s", tc.login, tc.path, status, tc.status, tc.want, page)
		}
	}
}

package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// installTrigger adds a trigger on console_audit that raises when cond
// holds (a condition on NEW, which may read other tables), for the tests
// that make the trail fail at one precise moment.
func (f *fixture) installTrigger(t *testing.T, name, timing, cond string) {
	t.Helper()
	db := f.g.DB().DB
	if _, err := db.Exec(`create or replace function ` + name + `() returns trigger language plpgsql as $$
		begin if ` + cond + ` then raise exception 'refused by the test'; end if; return new; end $$`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`create trigger ` + name + ` ` + timing + ` on console_audit for each row execute function ` + name + `()`); err != nil {
		t.Fatal(err)
	}
}

// auditRows lists outcome|detail|error_code of action's rows on target
// (read through jsonb, so that the test runs on the schema before 0018).
func (f *fixture) auditRows(t *testing.T, action, target string) []string {
	t.Helper()
	return f.column(t, `select outcome || '|' || detail || '|' || coalesce(to_jsonb(a) ->> 'error_code', '') from console_audit a
		where action = $1 and target = $2 order by id`, action, target)
}

// A domain command's row is written before it runs: when the database
// refuses the write after the command (here: the outcome's update of a
// card freeze and of a deposit), the command has happened and its row is
// there, 'pending' with who, what and the intent (outcome unknown).
// Before, the row was written after the action and was lost with it.
func TestAuditOutcomeLostLeavesPendingRow(t *testing.T) {
	f := newFixture(t)
	f.installTrigger(t, "refuse_outcome", "before update", `new.action in ('card.freeze', 'merchant.deposit')`)
	ann := newWebUser(t, f, "ann.admin")
	olga := newWebUser(t, f, "olga.operator")

	if status, _ := ann.post(t, "/cards/"+f.cardsA[0]+"/freeze", url.Values{"reason": {"lost in a taxi"}}); status != http.StatusSeeOther {
		t.Errorf("freeze: %d, want 303 (it happened)", status)
	}
	if s := f.cardStatus(t, f.cardsA[0]); s != "FROZEN" {
		t.Errorf("card %s, want FROZEN", s)
	}
	if got := f.auditRows(t, "card.freeze", f.cardsA[0]); len(got) != 1 || got[0] != "pending|lost in a taxi|" {
		t.Errorf("freeze rows: %q, want one pending row with the reason", got)
	}

	entries := f.countRows(t, "entries")
	_, body := olga.post(t, "/operator/merchants/"+f.a.ShopNo+"/deposit", url.Values{"currency": {"USD"}, "amount": {"10.00"}, "bankReference": {"BANK-AUDIT-1"}})
	m := keyRE.FindStringSubmatch(body)
	if m == nil {
		t.Fatal("no deposit confirmation")
	}
	if status, _ := olga.post(t, "/operator/merchants/"+f.a.ShopNo+"/deposit/confirm",
		url.Values{"currency": {"USD"}, "amount": {"10.00"}, "bankReference": {"BANK-AUDIT-1"}, "idempotencyKey": {m[1]}}); status != http.StatusSeeOther {
		t.Errorf("deposit: %d, want 303", status)
	}
	got := f.auditRows(t, "merchant.deposit", f.a.ShopNo)
	if f.countRows(t, "entries") != entries+1 || len(got) != 1 || got[0] != "pending|10.00 USD, bank reference BANK-AUDIT-1, key "+m[1]+"|" {
		t.Errorf("deposit: entries %d→%d, rows %q, want one entry and one pending row naming its key", entries, f.countRows(t, "entries"), got)
	}
	// The trail page shows it as pending now, as unknown once it has
	// outlived every action's bound.
	aldo := newWebUser(t, f, "aldo.auditor")
	if _, page := aldo.get(t, "/audit/trail"); !strings.Contains(page, "<td>pending</td>") {
		t.Error("the trail page does not show the pending row")
	}
	f.clock.Add(20 * 60e9)
	aldo = newWebUser(t, f, "aldo.auditor")
	if _, page := aldo.get(t, "/audit/trail"); !strings.Contains(page, "unknown (pending since") {
		t.Error("the trail page does not show the old pending row as unknown")
	}
}

// A domain command's row is in the trail with its outcome even when the
// trail would refuse a row written after the command (the trigger refuses
// a freeze's row once the card is frozen): the row was written before.
// Before, the probe passed, the card froze and the row was lost.
func TestDomainActionRowIsWrittenBeforeTheAction(t *testing.T) {
	f := newFixture(t)
	f.installTrigger(t, "refuse_late_row", "before insert", `new.action = 'card.freeze'
		and exists (select 1 from cards where card_no = new.target and status = 'FROZEN')`)
	ann := newWebUser(t, f, "ann.admin")
	if status, _ := ann.post(t, "/cards/"+f.cardsA[1]+"/freeze", url.Values{"reason": {"fraud"}}); status != http.StatusSeeOther {
		t.Errorf("freeze: %d, want 303", status)
	}
	if got := f.auditRows(t, "card.freeze", f.cardsA[1]); f.cardStatus(t, f.cardsA[1]) != "FROZEN" || len(got) != 1 || got[0] != "ok|fraud|" {
		t.Errorf("card %s, rows %q: want FROZEN with one ok row", f.cardStatus(t, f.cardsA[1]), got)
	}
	// A refused command resolves its row as failed, with the code (here
	// another merchant's card, answered as an unknown one).
	if status, _ := ann.post(t, "/cards/"+f.cardB+"/freeze", url.Values{"reason": {"theirs"}}); status != http.StatusNotFound {
		t.Errorf("freeze of another merchant's card: %d, want 404", status)
	}
	if got := f.auditRows(t, "card.freeze", f.cardB); len(got) != 1 || !strings.HasPrefix(got[0], "failed|theirs, ") || !strings.HasSuffix(got[0], "|not_found") {
		t.Errorf("rows %q: want one failed with its code", got)
	}
}

// An action on the console's own tables and its row are one transaction:
// when the row cannot be written after the change was made in it (the
// trigger refuses the row once the user is disabled, or once the new user
// exists), both roll back — 503, the user still enabled with its session,
// no user made. Before, the probe passed, the change committed and the row
// was lost.
func TestAtomicUserActionsRollBackWithTheirRow(t *testing.T) {
	f := newFixture(t)
	f.installTrigger(t, "refuse_after_change", "before insert", `new.outcome = 'ok' and (
		(new.action = 'user.disable' and exists (select 1 from console_users where login = new.target and disabled))
		or (new.action = 'user.create' and exists (select 1 from console_users where login = new.target)))`)
	ann := newWebUser(t, f, "ann.admin")
	rita := newWebUser(t, f, "rita.readonly")
	var id string
	if err := f.g.DB().DB.QueryRow(`select id::text from console_users where login = 'rita.readonly'`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	if status, _ := ann.post(t, "/users/"+id+"/disable", nil); status != http.StatusServiceUnavailable {
		t.Errorf("disable: %d, want 503", status)
	}
	var disabled bool
	if err := f.g.DB().DB.QueryRow(`select disabled from console_users where id = $1`, id).Scan(&disabled); err != nil {
		t.Fatal(err)
	}
	if status, _ := rita.get(t, "/balances"); disabled || status != http.StatusOK {
		t.Errorf("the disable committed without its row: disabled %v, rita's session %d", disabled, status)
	}
	if status, _ := ann.post(t, "/users", url.Values{"login": {"nina.new"}, "role": {"finance"}, "currentPassword": {password}}); status != http.StatusServiceUnavailable {
		t.Errorf("create: %d, want 503", status)
	}
	if n := f.countRows(t, "console_users where login = 'nina.new'"); n != 0 {
		t.Errorf("the user was made without its row")
	}
	if got := f.auditRows(t, "user.disable", "rita.readonly"); len(got) != 0 {
		t.Errorf("rows of the rolled-back disable: %q", got)
	}
}

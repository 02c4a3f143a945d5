package console_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// The BIN catalogue: add an entry, disable it, and refusals naming the
// field with the form kept.

func TestBINCatalogue(t *testing.T) {
	f := newFixture(t)
	b := newBrowser(t)
	b.login(t, f, "olga.operator", f.code(t, "olga.operator"))
	b.open(t, f.url("/operator/bins"))
	if s := b.text(t, `tr[data-bin="453201-USD"]`); !strings.Contains(s, "VISA") {
		t.Errorf("the fixture's BIN: %q", s)
	}
	b.do(t, chromedp.SendKeys(chromedp.ID("bin"), "55443322"), chromedp.SendKeys(chromedp.ID("bin-currency"), "eur"),
		chromedp.SetValue(chromedp.ID("network"), "MASTERCARD"), chromedp.Click(chromedp.ID("save-bin")))
	b.waitJS(t, `!!document.querySelector('#saved') && !!document.querySelector('tr[data-bin="55443322-EUR"]')`)
	db := f.g.DB().DB
	var network string
	var enabled bool
	row := func() {
		t.Helper()
		if err := db.QueryRow(`select network, enabled from bins where bin = '55443322' and currency = 'EUR'`).Scan(&network, &enabled); err != nil {
			t.Fatal(err)
		}
	}
	if row(); network != "MASTERCARD" || !enabled {
		t.Errorf("added %s, enabled %v", network, enabled)
	}
	b.shot(t, "bins")
	b.do(t, chromedp.Click(chromedp.CSS(`tr[data-bin="55443322-EUR"] button.toggle`)))
	b.waitJS(t, `(document.querySelector('tr[data-bin="55443322-EUR"] td.enabled') || {}).textContent === 'no'`)
	if row(); enabled {
		t.Error("the entry is still enabled")
	}

	// Refusals name the field, keep what was typed, change nothing.
	b.open(t, f.url("/operator/bins"))
	b.do(t, chromedp.SendKeys(chromedp.ID("bin"), "12345"), chromedp.SendKeys(chromedp.ID("bin-currency"), "USD"), chromedp.Click(chromedp.ID("save-bin")))
	b.waitJS(t, `!!document.querySelector('#form-error')`)
	if s := b.text(t, "#form-error"); !strings.HasPrefix(s, "bin:") {
		t.Errorf("short BIN: %q", s)
	}
	if v := eval[string](t, b, `document.querySelector('#bin').value`); v != "12345" {
		t.Errorf("the form lost the BIN: %q", v)
	}
	for _, c := range []struct {
		form  map[string]string
		field string
	}{
		{map[string]string{"bin": "12345a", "currency": "USD", "network": "VISA"}, "bin"},
		{map[string]string{"bin": "123456", "currency": "XYZ", "network": "VISA"}, "currency"},
		{map[string]string{"bin": "123456", "currency": "US", "network": "VISA"}, "currency"},
		{map[string]string{"bin": "123456", "currency": "USD", "network": "AMEX"}, "network"},
		{map[string]string{"bin": "123456", "currency": "USD", "network": "VISA", "enabled": "yes"}, "enabled"},
	} {
		c.form["csrf"] = b.csrf(t)
		if got := b.post(t, "/operator/bins", c.form); got != 400 {
			t.Errorf("%v: %d, want 400", c.form, got)
		}
	}
	var n int
	if err := db.QueryRow(`select count(*) from bins where bin in ('12345', '12345a', '123456')`).Scan(&n); err != nil || n != 0 {
		t.Errorf("refused entries stored: %d, %v", n, err)
	}
	if acts := strings.Join(f.auditActions(t), " "); strings.Count(acts, "bin.upsert:ok") != 2 {
		t.Errorf("audit trail %s: want two bin.upsert", acts)
	}
}

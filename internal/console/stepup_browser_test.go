package console_test

import (
	"maps"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The step-up's fields as the tests type them (stepup.go).

// confirmFields are the acting user's confirmation: the password and, for
// a house role, the code of a new step (a code is good once, and the
// login took the current one).
func (f *fixture) confirmFields(t *testing.T, login string) map[string]string {
	t.Helper()
	m := map[string]string{"currentPassword": password}
	if f.secrets[login] != "" {
		f.clock.Add(30 * time.Second)
		m["totp"] = f.code(t, login)
	}
	return m
}

// withConfirm is form with the acting user's confirmation added.
func (f *fixture) withConfirm(t *testing.T, login string, form map[string]string) map[string]string {
	t.Helper()
	out := maps.Clone(form)
	maps.Copy(out, f.confirmFields(t, login))
	return out
}

// typeConfirmation types the confirmation into the page's fields (the
// create form's, or the page that asks for it).
func (b *browser) typeConfirmation(t *testing.T, f *fixture, login string) {
	t.Helper()
	for id, v := range f.confirmFields(t, login) {
		b.do(t, chromedp.SendKeys(chromedp.ID(id), v))
	}
}

// clickConfirmed clicks an action's button, then confirms on the page
// that asks for the password.
func (b *browser) clickConfirmed(t *testing.T, f *fixture, login, css string) {
	t.Helper()
	b.do(t, chromedp.Click(chromedp.CSS(css)), chromedp.WaitVisible(chromedp.ID("stepup-form")))
	b.typeConfirmation(t, f, login)
	b.do(t, chromedp.Click(chromedp.ID("confirm")))
}

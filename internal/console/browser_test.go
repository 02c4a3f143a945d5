package console_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The browser: Debian's chromium, headless, driven by chromedp. `make test`
// installs it (make chromium) and sets requireBrowserEnv, so that a missing
// browser fails the run there; elsewhere the browser tests skip, saying why.

const (
	requireBrowserEnv    = "GATEWAY_TEST_REQUIRE_BROWSER"
	updateScreenshotsEnv = "GATEWAY_UPDATE_SCREENSHOTS"
	browserTimeout       = 3 * time.Minute
)

func chromiumPath(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		// The fast tier (make test-short) starts no browser.
		t.Skip("drives Chromium: skipped under -short (make test-short); make test runs it")
	}
	for _, p := range []string{os.Getenv("GATEWAY_TEST_CHROMIUM"), "/usr/lib/chromium/chromium", "/usr/bin/chromium"} {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	if os.Getenv(requireBrowserEnv) != "" {
		t.Fatalf("chromium is not installed (%s is set: this run must have it; make chromium installs it)", requireBrowserEnv)
	}
	t.Skipf("chromium is not installed; `make test` installs it (make chromium) and runs this test")
	return ""
}

// browser is one headless Chromium with its own profile (its own cookies),
// and the console messages it logged.
type browser struct {
	ctx  context.Context
	mu   sync.Mutex
	msgs []chromedp.ConsoleMessage
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath(t)), chromedp.Flag("headless", "new"), chromedp.DisableGPU,
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.IgnoreCertErrors, chromedp.WindowSize(1280, 900))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, browserTimeout)
	b := &browser{ctx: ctx}
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		cancelT()
		cancelC()
		cancelA()
		t.Fatalf("start chromium: %v", err)
	}
	msgs := chromedp.Console(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m, err := range msgs {
			if err != nil {
				return
			}
			b.mu.Lock()
			b.msgs = append(b.msgs, m)
			b.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		cancelT()
		cancelC()
		cancelA()
		<-done
		// The strict CSP holds for every page: any violation (or script
		// error) the browser logged fails the test.
		b.mu.Lock()
		defer b.mu.Unlock()
		for _, m := range b.msgs {
			if m.Source == "security" || m.IsException() || strings.Contains(m.Text, "Content Security Policy") {
				t.Errorf("browser console: %s %s (%s)", m.Source, m, m.URL)
			}
		}
	})
	return b
}

func (b *browser) do(t *testing.T, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(b.ctx, steps...); err != nil {
		t.Fatal(err)
	}
}

// open navigates to url and returns the HTTP status of the document.
func (b *browser) open(t *testing.T, url string) int64 {
	t.Helper()
	res, err := chromedp.Run(b.ctx, chromedp.NavigateResponse(url))
	if err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	return res.Status
}

func (b *browser) text(t *testing.T, css string) string {
	t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS(css)))
	if err != nil {
		t.Fatalf("text of %s: %v", css, err)
	}
	return strings.TrimSpace(s)
}

func (b *browser) location(t *testing.T) string {
	t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// eval runs JavaScript in the page (a promise is awaited).
func eval[T any](t *testing.T, b *browser, js string) T {
	t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](js, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// post sends a form from the page with fetch, as a browser would send a
// crafted one: same origin, the page's cookies. It returns the status.
func (b *browser) post(t *testing.T, path string, form map[string]string) int {
	t.Helper()
	var sb strings.Builder
	sb.WriteString("fetch(" + jsString(path) + ", {method: 'POST', redirect: 'manual', body: new URLSearchParams({")
	for k, v := range form {
		sb.WriteString(jsString(k) + ": " + jsString(v) + ",")
	}
	sb.WriteString("})}).then(r => r.status)")
	return eval[int](t, b, sb.String())
}

// csrf is the session's CSRF token, as the page's forms carry it.
func (b *browser) csrf(t *testing.T) string {
	t.Helper()
	return eval[string](t, b, `document.querySelector('input[name=csrf]').value`)
}

func jsString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`)
	return "'" + r.Replace(s) + "'"
}

// login signs in through the form and waits for the signed-in header.
func (b *browser) login(t *testing.T, f *fixture, login, code string) {
	t.Helper()
	b.open(t, f.url("/login"))
	b.fillShopNo(t, f, login)
	b.do(t, chromedp.SendKeys(chromedp.ID("login"), login), chromedp.SendKeys(chromedp.ID("password"), password))
	if code != "" {
		b.do(t, chromedp.SendKeys(chromedp.ID("totp"), code))
	}
	b.do(t, chromedp.Click(chromedp.ID("submit")), chromedp.WaitVisible(chromedp.ID("who")))
}

// fillShopNo types the shop number of the login's merchant, as its user
// would (logins are per scope); a house user's, or an unknown login's,
// stays empty.
func (b *browser) fillShopNo(t *testing.T, f *fixture, login string) {
	t.Helper()
	if shop := f.shopOf(t, login); shop != "" {
		b.do(t, chromedp.SendKeys(chromedp.ID("shopNo"), shop))
	}
}

// tryLogin submits the form and returns the message the page then shows
// ("" when it signed in).
func (b *browser) tryLogin(t *testing.T, f *fixture, login, pw, code string) string {
	t.Helper()
	b.open(t, f.url("/login"))
	b.fillShopNo(t, f, login)
	b.do(t, chromedp.SendKeys(chromedp.ID("login"), login), chromedp.SendKeys(chromedp.ID("password"), pw))
	if code != "" {
		b.do(t, chromedp.SendKeys(chromedp.ID("totp"), code))
	}
	b.do(t, chromedp.Click(chromedp.ID("submit")), chromedp.WaitVisible(chromedp.CSS("#login-error, #who")))
	s, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](
		`(document.querySelector('#login-error') || {textContent: ''}).textContent`))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// shot writes a full-page PNG of the current page to docs/console/name.png
// when GATEWAY_UPDATE_SCREENSHOTS is set, so that the screenshots in
// docs/console.md are what the code serves; a plain test run leaves the
// tree as it is.
func (b *browser) shot(t *testing.T, name string) {
	t.Helper()
	if os.Getenv(updateScreenshotsEnv) == "" {
		return
	}
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	dir := filepath.Join("..", "..", "docs", "console")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitJS waits until the expression is true in the page: after a click
// whose answer htmx swaps in, or a navigation.
func (b *browser) waitJS(t *testing.T, js string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := chromedp.Run(b.ctx, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(time.Until(deadline))))
		// A click that submits a form navigates: a poll begun on the old
		// page ends with "navigated or closed", and the condition is for
		// the new one (TestBINCatalogue failed so under load).
		if err != nil && strings.Contains(err.Error(), "navigated or closed") && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		if err != nil {
			t.Fatalf("waiting for %s: %v", js, err)
		}
		return
	}
}

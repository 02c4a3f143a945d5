package console_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/paygate/gateway/internal/audit"
)

// audit verify runs in the background: its page shows the progress the
// ledger reports, refreshing itself with htmx (and with a <noscript> meta
// refresh without JavaScript), then the report. One run at a time.

// gatedAudit is the fixture's audit; a test can hold Verify after a first
// progress report, so that the page is seen while the run goes.
type gatedAudit struct {
	*audit.Service
	mu          sync.Mutex
	hold        chan struct{}
	done, total int64
}

// holdVerify makes the next Verify report done of total and wait until
// the returned release is called.
func (g *gatedAudit) holdVerify(done, total int64) (release func()) {
	ch := make(chan struct{})
	g.mu.Lock()
	g.hold, g.done, g.total = ch, done, total
	g.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { close(ch) }) }
}

func (g *gatedAudit) Verify(ctx context.Context, opts audit.VerifyOptions) (*audit.Report, error) {
	g.mu.Lock()
	ch, done, total := g.hold, g.done, g.total
	g.hold = nil
	g.mu.Unlock()
	if ch != nil {
		if opts.Progress != nil {
			opts.Progress(done, total)
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return g.Service.Verify(ctx, opts)
}

func TestVerifyRunShowsProgress(t *testing.T) {
	f := newFixture(t)
	b := newBrowser(t)
	b.login(t, f, "aldo.auditor", f.code(t, "aldo.auditor"))
	release := f.audit.holdVerify(3, 8)
	t.Cleanup(release)
	b.open(t, f.url("/audit/verify"))
	b.do(t, chromedp.SendKeys(chromedp.ID("shopNo"), f.a.ShopNo), chromedp.Click(chromedp.ID("run-verify")))
	b.waitJS(t, `!!document.querySelector('#verify-progress')`)
	if s := b.text(t, "#verify-progress"); !strings.Contains(s, "3 of 8 entries checked (37%)") {
		t.Errorf("progress: %q", s)
	}
	runURL := b.location(t)
	if !strings.Contains(runURL, "/audit/verify/") {
		t.Fatalf("the run's page is %s", runURL)
	}
	b.shot(t, "verify-progress")

	// A second run while this one goes is refused, naming the running one.
	if got := b.post(t, "/audit/verify", map[string]string{"csrf": b.csrf(t), "shopNo": ""}); got != 503 {
		t.Errorf("a second verify while one runs: %d, want 503", got)
	}

	// Without JavaScript the page reloads itself (a meta refresh inside
	// <noscript>) and so reaches the report too.
	nb := newBrowser(t)
	nb.login(t, f, "olga.operator", f.code(t, "olga.operator"))
	nb.do(t, func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, tg, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
		return chromedp.Void{}, err
	})
	nb.open(t, runURL)
	if s := nb.text(t, "#verify-progress"); !strings.Contains(s, "3 of 8 entries checked") {
		t.Errorf("progress without JavaScript: %q", s)
	}

	release()
	// htmx polls the run's part of the page in place: no navigation.
	b.waitJS(t, `!!document.querySelector('#verify-result')`)
	if s := b.text(t, "#verify-result"); s != "OK: the journal verifies." {
		t.Errorf("verify: %q", s)
	}
	if loc := b.location(t); loc != runURL {
		t.Errorf("the page moved to %s", loc)
	}
	nb.waitAcrossReloads(t, `!!document.querySelector('#verify-result')`)

	b.open(t, f.url("/audit/verify"))
	if s := b.text(t, "#verify-runs tbody"); !strings.Contains(s, f.a.ShopNo) || !strings.Contains(s, "OK") {
		t.Errorf("recent runs: %q", s)
	}
	if got := b.open(t, f.url("/audit/verify/0123456789abcdef01234567")); got != 404 {
		t.Errorf("an unknown run: %d", got)
	}
	acts := strings.Join(f.auditActions(t), " ")
	for _, want := range []string{"audit.verify.start:ok", "audit.verify:ok"} {
		if !strings.Contains(acts, want) {
			t.Errorf("audit trail %s lacks %s", acts, want)
		}
	}
}

// waitAcrossReloads waits until js is true in a page that reloads itself:
// an evaluation cut by the reload is tried again.
func (b *browser) waitAcrossReloads(t *testing.T, js string) {
	t.Helper()
	for i := 0; i < 120; i++ {
		if ok, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](js)); err == nil && ok {
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("%s never held across the page's reloads", js)
}

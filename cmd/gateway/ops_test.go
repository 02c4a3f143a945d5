package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/app"
)

// shopGet calls a /shop endpoint of s with a merchant's credentials and
// returns the HTTP status and the envelope.
func shopGet(t *testing.T, s *server, shopNo, publicKey, path string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.url(path), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Shop-No", shopNo)
	req.Header.Set("X-Public-Key", publicKey)
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var env map[string]any
	if err := json.Unmarshal(b, &env); err != nil {
		t.Fatalf("GET %s: %s is not an envelope", path, b)
	}
	return resp.StatusCode, env
}

// serve --demo (what make run starts) makes a funded demo merchant whose
// credentials in the data directory work at once, and finds it again on the
// next start instead of making another.
func TestServeDemoMerchant(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	s := g.serve("--demo")
	path := filepath.Join(g.env["GATEWAY_DATA_DIR"], app.DemoFile)
	read := func() app.DemoCredentials {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("the demo credentials: %v", err)
		}
		var c app.DemoCredentials
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatal(err)
		}
		if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600: it holds keys", path, st.Mode().Perm())
		}
		return c
	}
	c := read()
	if c.BaseURL != s.url("") || c.CACert == "" {
		t.Errorf("demo credentials %+v (server %s)", c, s.url(""))
	}
	status, env := shopGet(t, s, c.ShopNo, c.PublicKey, "/shop/account")
	if status != 200 || env["code"] != float64(200) {
		t.Fatalf("GET /shop/account with the demo credentials: %d %v", status, env)
	}
	body, _ := json.Marshal(env["data"])
	for _, want := range []string{`"USD"`, `"EUR"`, `10000`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("demo profile %s lacks %s", body, want)
		}
	}
	s.mustStop()
	s = g.serve("--demo")
	if again := read(); again.ShopNo != c.ShopNo {
		t.Errorf("the second start made another demo merchant: %s, then %s", c.ShopNo, again.ShopNo)
	}
	s.mustStop()
	g.auditOK()
}

// The operator's commands change what the API sees.
func TestOperatorCommands(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	c := g.createMerchant("Ops shop", "USD,EUR")
	s := g.serve()
	account := func() int {
		status, _ := shopGet(t, s, c.ShopNo, c.PublicKey, "/shop/account")
		return status
	}
	// The server keeps a successful authentication for a second, so a
	// change made by another process shows within about that long; the
	// wait is bounded by what a loaded machine may take to answer, not by
	// that second (a change that never shows still fails).
	eventually := func(want int) int {
		var got int
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if got = account(); got == want {
				break
			}
		}
		return got
	}
	if account() != 200 {
		t.Fatal("a new merchant cannot read its account")
	}
	g.mustRun("merchant", "disable", "--shop-no", c.ShopNo)
	if got := eventually(403); got != 403 {
		t.Errorf("disabled merchant: %d, want 403", got)
	}
	g.mustRun("merchant", "enable", "--shop-no", c.ShopNo)
	if got := eventually(200); got != 200 {
		t.Errorf("enabled merchant: %d, want 200", got)
	}
	g.mustRun("merchant", "whitelist", "--shop-no", c.ShopNo, "--ip-whitelist", "192.0.2.0/24,2001:db8::/32")
	if got := eventually(403); got != 403 {
		t.Errorf("caller outside the whitelist: %d, want 403", got)
	}
	g.mustRun("merchant", "whitelist", "--shop-no", c.ShopNo, "--ip-whitelist", "127.0.0.1")
	if got := eventually(200); got != 200 {
		t.Errorf("whitelisted caller: %d, want 200", got)
	}
	g.mustFail("--ip-whitelist", "merchant", "whitelist", "--shop-no", c.ShopNo, "--ip-whitelist", "not-an-ip")
	out := g.mustRun("merchant", "kyb", "--shop-no", c.ShopNo, "--tier", "TIER_2")
	if !strings.Contains(out, `"kybTier": "TIER_2"`) || !strings.Contains(out, "100000.00") {
		t.Errorf("merchant kyb printed %s", out)
	}
	out = g.mustRun("merchant", "limits", "--shop-no", c.ShopNo, "--currency", "EUR",
		"--card-balance-max", "500.00", "--daily-card-issue-max", "1000.00")
	if !strings.Contains(out, "500.00") {
		t.Errorf("merchant limits printed %s", out)
	}
	g.mustFail("--card-balance-max", "merchant", "limits", "--shop-no", c.ShopNo, "--currency", "EUR",
		"--card-balance-max", "5.001", "--daily-card-issue-max", "1")

	g.mustRun("bin", "add", "--bin", "41111111", "--currency", "EUR", "--network", "VISA")
	if out := g.mustRun("bin", "list"); !strings.Contains(out, "41111111") {
		t.Errorf("bin list %s", out)
	}
	out = g.mustRun("bin", "access", "--shop-no", c.ShopNo, "--bin", "453201", "--currency", "USD", "--mode", "deny")
	if strings.Contains(out, `"453201"`) {
		t.Errorf("a denied BIN is still listed: %s", out)
	}
	g.mustRun("fx", "set", "--pair", "USD/EUR", "--rate", "0.9", "--spread-bps", "25")
	if out := g.mustRun("fx", "list"); !strings.Contains(out, `"midRate": "0.9"`) {
		t.Errorf("fx list %s", out)
	}
	g.mustFail("rate", "fx", "set", "--pair", "USD/EUR", "--rate", "-1")

	g.mustRun("merchant", "callback-url", "--shop-no", c.ShopNo, "--url", "https://shop.example.com/hooks")
	if out := g.mustRun("callbacks", "list", "--shop-no", c.ShopNo); !strings.Contains(out, "SEQ") {
		t.Errorf("callbacks list %s", out)
	}
	for _, limit := range []string{"0", "-1", "1001", "2147483648", "9223372036854775807"} {
		g.mustFail("--limit", "callbacks", "list", "--shop-no", c.ShopNo, "--limit", limit)
	}
	g.mustFail("event", "callbacks", "replay", "--shop-no", c.ShopNo, "--event-id", "evt_nosuchevent")
	// The API's order rule: asc or desc, nothing else.
	g.mustRun("callbacks", "list", "--shop-no", c.ShopNo, "--order", "asc")
	g.mustFail("order", "callbacks", "list", "--shop-no", c.ShopNo, "--order", "newest")

	list := filepath.Join(t.TempDir(), "sanctions.csv")
	if err := os.WriteFile(list, []byte("name,country\nEvil Corp,DE\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := g.mustRun("sanctions", "load", "--file", list); !strings.Contains(out, `"entries": 1`) {
		t.Errorf("sanctions load %s", out)
	}
	g.mustFail("remittance not found", "rail", "settle", "--tx-id", "rmt_nosuchremittance0000")
	s.mustStop()
	g.auditOK()
}

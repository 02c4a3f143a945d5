package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/app"
	"github.com/paygate/gateway/internal/merchant"
)

// A database records the fingerprint of the key its first start made
// (a newcomer's empty database gets a new key); serve and every command
// that opens sealed values is then refused, exit 2, with another key or
// none, naming the fingerprint expected and the one found (issue 31,
// point 2). The database's own key rotates and re-seals.
func TestDataKeyBoundToTheDatabase(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	var created struct {
		ShopNo string `json:"shopNo"`
	}
	if err := json.Unmarshal([]byte(g.mustRun("merchant", "create", "--name", "Keyed", "--currencies", "USD")), &created); err != nil {
		t.Fatal(err)
	}
	key, err := app.ReadDataKeyFile(filepath.Join(g.env["GATEWAY_DATA_DIR"], "data.key"))
	if err != nil {
		t.Fatalf("the first start made no key: %v", err)
	}
	want := merchant.KeyFingerprint(key)
	other := strings.Repeat("6b", 32)
	otherFP := merchant.KeyFingerprint([]byte(strings.Repeat("k", 32)))
	for _, args := range [][]string{
		{"serve"},
		{"merchant", "show", "--shop-no", created.ShopNo},
		{"audit", "verify"},
		{"datakey", "status"},
		{"datakey", "rotate"},
	} {
		for _, tt := range []struct {
			name  string
			env   map[string]string
			found string
		}{
			{"another key", map[string]string{"GATEWAY_DATA_KEY": other}, otherFP},
			{"no key", map[string]string{"GATEWAY_DATA_DIR": t.TempDir()}, "none"},
		} {
			h := &gateway{t: t, env: map[string]string{}}
			for k, v := range g.env {
				h.env[k] = v
			}
			for k, v := range tt.env {
				h.env[k] = v
			}
			r := h.run(args...)
			if r.code() != 2 || r.err == nil || !strings.Contains(r.err.Error(), "expects data key fingerprint "+want) ||
				!strings.Contains(r.err.Error(), "found "+tt.found) {
				t.Errorf("%v with %s: exit %d, %v; want 2 naming %s and %s", args, tt.name, r.code(), r.err, want, tt.found)
			}
			if r.err != nil && (strings.Contains(r.err.Error(), other) || strings.Contains(r.err.Error(), string(key))) {
				t.Errorf("%v with %s: the refusal shows a key", args, tt.name)
			}
			if dir := tt.env["GATEWAY_DATA_DIR"]; dir != "" {
				if _, err := os.Stat(filepath.Join(dir, "data.key")); err == nil {
					t.Errorf("%v with %s: a new key was made for a bound database", args, tt.name)
				}
			}
		}
	}

	if out := g.mustRun("datakey", "status"); !strings.Contains(out, "fingerprint "+want) || !strings.Contains(out, "version 0 (the data key itself), current: 2 sealed values") {
		t.Fatalf("status:\n%s", out)
	}
	if out := g.mustRun("datakey", "rotate"); !strings.Contains(out, "data key version 1 added") || !strings.Contains(out, "re-seal: 2 sealed values under an older version") {
		t.Fatalf("rotate:\n%s", out)
	}
	g.mustRun("merchant", "create", "--name", "Keyed two", "--currencies", "USD")
	out := g.mustRun("datakey", "reseal")
	if !strings.Contains(out, "re-sealed 2 values under version 1") || !strings.Contains(out, "re-seal: 0 sealed values") ||
		!strings.Contains(out, "current: 4 sealed values") {
		t.Fatalf("reseal:\n%s", out)
	}
	g.mustRun("merchant", "show", "--shop-no", created.ShopNo)
	g.mustRun("audit", "verify")
}

// serve re-seals in the background after a rotation made by another
// process: it adopts the new version and moves every sealed value to it.
// Not parallel: it shortens the re-seal's period before any parallel test
// runs a serve.
func TestServeResealsInTheBackground(t *testing.T) {
	defer func(d time.Duration) { resealEvery = d }(resealEvery)
	resealEvery = 50 * time.Millisecond
	g := newGateway(t)
	g.mustRun("merchant", "create", "--name", "Resealed", "--currencies", "USD")
	s := g.serve()
	if out := g.mustRun("datakey", "rotate"); !strings.Contains(out, "re-seal: 2 sealed values under an older version") {
		t.Fatalf("rotate:\n%s", out)
	}
	deadline := time.Now().Add(commandTimeout)
	for {
		out := g.mustRun("datakey", "status")
		if strings.Contains(out, "re-seal: 0 sealed values") && strings.Contains(out, "current: 2 sealed values") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not re-seal within %s:\n%s\n%s", commandTimeout, out, s.stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.mustStop()
}

package api

import (
	"context"
	"database/sql"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/database"
)

// A database that answers but cannot do the work in time — a lock held by
// another transaction past lock_timeout, a statement past statement_timeout
// — is a 503 with Retry-After in the envelope, never a 500, and nothing
// is done: the same request with the same Idempotency-Key succeeds once the
// lock is gone. The locks are real, held by another transaction; the
// server's pool has short time-outs so that the test does not wait the
// production ones (10 s, 30 s).
func TestDatabaseTimeoutsAre503(t *testing.T) {
	t.Parallel()
	// stmtTimeout bounds every statement of the server's pool, the test's
	// set-up (a merchant, a deposit) included: long enough that a loaded
	// machine finishes the set-up within it (300 ms did not: a deposit was
	// cancelled under load), short enough not to wait the production 30 s.
	const stmtTimeout = 2 * time.Second
	for _, tc := range []struct {
		name string
		db   database.DBOptions
		hold string // run in the other transaction; ? is the merchant's id
		req  func(s *testServer, sh shop, key string) *http.Request
	}{
		{
			name: "writer, lock_timeout on the merchant's head",
			db:   database.DBOptions{LockTimeout: 200 * time.Millisecond},
			hold: `select 1 from ledger_heads where merchant_id = ? for update`,
			req: func(s *testServer, sh shop, key string) *http.Request {
				return shopRequest(s, sh, "POST", "/shop/card/create", `{"bin":"453201","currency":"USD","amount":"5.00"}`,
					"Idempotency-Key", key)
			},
		},
		{
			name: "bill read, lock_timeout",
			db:   database.DBOptions{LockTimeout: 200 * time.Millisecond},
			hold: `lock table bill_lines in access exclusive mode`,
			req: func(s *testServer, sh shop, _ string) *http.Request {
				return shopRequest(s, sh, "GET", billPath("2026-01-01", "2026-01-31"), "")
			},
		},
		{
			name: "bill read as CSV, statement_timeout",
			db:   database.DBOptions{StatementTimeout: stmtTimeout, LockTimeout: time.Hour},
			hold: `lock table bill_lines in access exclusive mode`,
			req: func(s *testServer, sh shop, _ string) *http.Request {
				return shopRequest(s, sh, "GET", billPath("2026-01-01", "2026-01-31"), "", "Accept", "text/csv")
			},
		},
		{
			name: "card read, statement_timeout",
			db:   database.DBOptions{StatementTimeout: stmtTimeout, LockTimeout: time.Hour},
			hold: `lock table cards in access exclusive mode`,
			req: func(s *testServer, sh shop, _ string) *http.Request {
				return shopRequest(s, sh, "GET", "/shop/card/info?cardNo=crd_00000000000000000000", "")
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := tc.db
			s := newTestServer(t, serverOptions{db: &db})
			sh := s.fundedShop()
			before := s.journal()
			retriesBefore := s.l.Stats().Retries
			ctx := context.Background()
			tx, err := s.l.DB().BeginTx(ctx, &sql.TxOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback() //nolint:errcheck
			if _, err := tx.NewRaw(tc.hold, sh.m.ID).Exec(ctx); err != nil {
				t.Fatal(err)
			}
			key := "timeout-" + strconv.FormatInt(time.Now().UnixNano(), 36)
			resp, raw := doRaw(t, s, tc.req(s, sh, key))
			if resp.StatusCode != 503 || !strings.HasPrefix(string(raw), `{"code":503,"message":"service unavailable; retry later with the same Idempotency-Key","data":null}`) {
				t.Fatalf("HTTP %d %s, want the 503 envelope", resp.StatusCode, raw)
			}
			if ra, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || ra < 1 {
				t.Errorf("Retry-After %q, want whole seconds", resp.Header.Get("Retry-After"))
			}
			if got := s.l.Stats().Retries; got != retriesBefore {
				t.Errorf("the writer retried a lock time-out %d times: each retry waits lock_timeout again", got-retriesBefore)
			}
			for _, line := range strings.Split(s.logs.String(), "\n") {
				if strings.Contains(line, `"msg":"internal error"`) {
					t.Errorf("a time-out was logged as an internal error: %s", line)
				}
			}
			if err := tx.Rollback(); err != nil {
				t.Fatal(err)
			}
			if after := s.journal(); after != before {
				t.Errorf("a timed-out request changed the journal:\n before %s\n after  %s", before, after)
			}
			// The lock gone, the same request succeeds.
			resp, raw = doRaw(t, s, tc.req(s, sh, key))
			if resp.StatusCode != 200 || resp.Header.Get("Retry-After") != "" {
				t.Errorf("after the lock: HTTP %d %s", resp.StatusCode, raw)
			}
		})
	}
}

// shopRequest builds a /shop request with the merchant's credentials and
// headers as name, value pairs.
func shopRequest(s *testServer, sh shop, method, path, body string, headers ...string) *http.Request {
	s.t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.srv.URL+path, r)
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("X-Shop-No", sh.creds.ShopNo)
	req.Header.Set("X-Public-Key", sh.creds.PublicKey)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return req
}

// doRaw sends req and returns the answer unparsed.
func doRaw(t *testing.T, s *testServer, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, raw
}

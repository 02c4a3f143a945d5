package console_test

import (
	"flag"
	"math/rand/v2"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// The console's HTTP fuzz run (issue 27, "Done when": malformed bytes in
// console forms): seeded requests to every console route that takes a
// form field, a query parameter or a path segment, each sent by a user of
// a role the route allows, with the session's CSRF token, and with one
// value replaced by malformed bytes — invalid UTF-8, NUL, a lone
// surrogate, bidi and tag characters, invisible format characters, an
// over-long value — or left valid, so that actions do happen too.
// Reproduce with the seed it prints:
//
//	go test ./internal/console -run TestConsoleHTTPFuzz -args -consolefuzz.seed=N
var (
	consoleFuzzSeed = flag.Uint64("consolefuzz.seed", 0, "seed of TestConsoleHTTPFuzz; 0 takes one from the clock")
	consoleFuzzN    = flag.Int("consolefuzz.n", 1000, "requests TestConsoleHTTPFuzz sends")
)

// consoleFuzzBudget bounds the run's time whatever -consolefuzz.n says.
const consoleFuzzBudget = 2 * time.Minute

// fuzzRoute is one route: who may send it, and a valid value of each of
// its path segments ({name} in path) and fields (the query of a GET, the
// form of a POST).
type fuzzRoute struct {
	user, method, path string
	segs, fields       map[string]string
}

// consoleFuzzValues are the malformed values, as raw bytes.
var consoleFuzzValues = []string{
	"\xff", "ab\xffcd", "a\x00b", "\x00", "\xed\xa0\x80", "\xed\xbf\xbf", "\xc0\xaf", "\xe2\x82", "\xf4\x90\x80\x80",
	"\u202e", "x\u2066y", "\u200f", "\U000E0041\U000E007F", "\u200b", "\ufeff", "\u00ad", "\u2028", "\ufffe", "\x1b[2J",
	"a\r\nb", "\t", strings.Repeat("a", 300), strings.Repeat("é", 1100), strings.Repeat("\u202e", 5000),
}

func (f *fixture) consoleFuzzRoutes(t *testing.T) []fuzzRoute {
	t.Helper()
	db := f.g.DB().DB
	var event, fred, olga string
	if err := db.QueryRow(`select event_id from events where merchant_id = $1 order by event_seq limit 1`, f.a.ID).Scan(&event); err != nil {
		event = "evt_unknown" // replay of an unknown event: the route is still fuzzed
	}
	for login, dst := range map[string]*string{"fred.finance": &fred, "olga.operator": &olga} {
		if err := db.QueryRow(`select id::text from console_users where login = $1`, login).Scan(dst); err != nil {
			t.Fatal(err)
		}
	}
	b := f.b.ShopNo // operators act on B: disabling A would end the admin's fuzzing session
	none := map[string]string{}
	return []fuzzRoute{
		{"ann.admin", "GET", "/cards", none, map[string]string{"q": "4532", "status": "ACTIVE"}},
		{"ann.admin", "GET", "/cards/{cardNo}", map[string]string{"cardNo": f.cardsA[0]}, none},
		{"ann.admin", "GET", "/cards/{cardNo}/{action}", map[string]string{"cardNo": f.cardsA[0], "action": "freeze"}, none},
		{"ann.admin", "POST", "/cards/{cardNo}/{action}", map[string]string{"cardNo": f.cardsA[1], "action": "freeze"}, map[string]string{"reason": "fuzz"}},
		{"ann.admin", "GET", "/bill", none, map[string]string{"startDate": "2026-01-01", "endDate": "2026-12-31", "page": "1", "size": "50"}},
		{"ann.admin", "GET", "/statement", none, map[string]string{"startDate": "2026-01-01", "endDate": "2026-12-31"}},
		{"ann.admin", "GET", "/reports/balance", none, map[string]string{"startDate": "2026-01-01", "endDate": "2026-12-31", "timeZone": "Europe/Paris", "currency": "USD"}},
		{"ann.admin", "GET", "/reports/balance-totals.csv", none, map[string]string{"startDate": "2026-01-01", "endDate": "2026-12-31", "timeZone": "Asia/Kolkata"}},
		{"ann.admin", "GET", "/events", none, map[string]string{"status": "PENDING"}},
		{"ann.admin", "GET", "/events/{eventID}", map[string]string{"eventID": event}, none},
		{"ann.admin", "POST", "/events/{eventID}/replay", map[string]string{"eventID": event}, none},
		{"ann.admin", "GET", "/remittances", none, map[string]string{"status": "SETTLED"}},
		{"ann.admin", "GET", "/remittances/{txId}", map[string]string{"txId": "rmt_unknown"}, none},
		{"ann.admin", "POST", "/users", none, map[string]string{"login": "fuzz.user", "role": "readonly"}},
		{"ann.admin", "POST", "/users/{id}/{action}", map[string]string{"id": fred, "action": "enable"}, none},
		{"olga.operator", "POST", "/operator/merchants", none, map[string]string{"name": "Fuzz shop", "currencies": "USD"}},
		{"olga.operator", "GET", "/operator/merchants/{shopNo}", map[string]string{"shopNo": b}, none},
		{"olga.operator", "POST", "/operator/merchants/{shopNo}/{action}", map[string]string{"shopNo": b, "action": "enable"}, none},
		{"olga.operator", "POST", "/operator/merchants/{shopNo}/whitelist", map[string]string{"shopNo": b}, map[string]string{"ipWhitelist": "127.0.0.1"}},
		{"olga.operator", "POST", "/operator/merchants/{shopNo}/kyb", map[string]string{"shopNo": b}, map[string]string{"tier": "TIER_2"}},
		{"olga.operator", "POST", "/operator/merchants/{shopNo}/limits", map[string]string{"shopNo": b},
			map[string]string{"currency": "USD", "cardBalanceMax": "5000.00", "dailyCardIssueMax": "1000.00"}},
		{"olga.operator", "POST", "/operator/merchants/{shopNo}/bins", map[string]string{"shopNo": b},
			map[string]string{"bin": "453201", "currency": "USD", "mode": "allow"}},
		{"olga.operator", "POST", "/operator/merchants/{shopNo}/callback-url", map[string]string{"shopNo": b},
			map[string]string{"callbackUrl": "https://shop.example/cb"}},
		{"olga.operator", "POST", "/operator/merchants/{shopNo}/deposit", map[string]string{"shopNo": b}, map[string]string{"currency": "USD", "amount": "1.00"}},
		{"olga.operator", "POST", "/operator/merchants/{shopNo}/deposit/confirm", map[string]string{"shopNo": b},
			map[string]string{"currency": "USD", "amount": "1.00", "idempotencyKey": "console-deposit-" + strings.Repeat("ab", 16)}},
		{"olga.operator", "POST", "/operator/merchants/{shopNo}/roll-key", map[string]string{"shopNo": b},
			map[string]string{"key": "signing", "overlapHours": "1", "idempotencyKey": "console-roll-" + strings.Repeat("cd", 16)}},
		{"olga.operator", "POST", "/operator/rates", none, map[string]string{"pair": "USD/EUR", "rate": "0.92", "spreadBps": "50"}},
		{"olga.operator", "POST", "/operator/bins", none, map[string]string{"bin": "453201", "currency": "USD", "network": "VISA", "enabled": "on"}},
		{"olga.operator", "POST", "/house/users", none, map[string]string{"login": "fuzz.operator", "role": "auditor"}},
		{"olga.operator", "POST", "/house/users/{id}/{action}", map[string]string{"id": olga, "action": "password"}, none},
		{"olga.operator", "GET", "/operator/sanctions", none, map[string]string{"loaded": "1"}},
		{"olga.operator", "POST", "/operator/sanctions/confirm", none, map[string]string{"idempotencyKey": "console-sanctions-" + strings.Repeat("ef", 16)}},
		{"aldo.auditor", "GET", "/audit/journal", none, map[string]string{"shopNo": f.a.ShopNo, "from": "1"}},
		{"aldo.auditor", "GET", "/audit/journal/{shopNo}/{seq}", map[string]string{"shopNo": f.a.ShopNo, "seq": "1"}, none},
		{"aldo.auditor", "GET", "/audit/trail", none, map[string]string{"before": "1000"}},
		{"aldo.auditor", "GET", "/audit/statement", none, map[string]string{"shopNo": f.a.ShopNo, "startDate": "2026-01-01", "endDate": "2026-12-31"}},
		{"aldo.auditor", "POST", "/audit/verify", none, map[string]string{"shopNo": f.a.ShopNo}},
		{"aldo.auditor", "GET", "/audit/checkpoints", none, map[string]string{"before": "1000"}},
		{"aldo.auditor", "GET", "/audit/checkpoints/{id}/file", map[string]string{"id": "1"}, none},
		{"aldo.auditor", "GET", "/closes", none, map[string]string{"shopNo": f.a.ShopNo, "before": "1000"}},
		{"olga.operator", "POST", "/house/adjustments", none, map[string]string{"shopNo": b, "mode": "free", "direction": "credit",
			"amount": "1.00", "currency": "USD", "houseAccount": "world", "reason": "fuzz", "reference": "FUZZ-1"}},
		{"olga.operator", "POST", "/house/adjustments/{id}/{decision}", map[string]string{"id": "1", "decision": "reject"}, map[string]string{"shopNo": b}},
	}
}

// build makes the request: the path with its segments (one maybe
// replaced), and the values (one maybe replaced). target names what was
// replaced ("" for none).
func (r *fuzzRoute) build(rng *rand.Rand) (path string, values url.Values, target, bad string) {
	var names []string
	for k := range r.segs {
		names = append(names, "seg:"+k)
	}
	for k := range r.fields {
		names = append(names, k)
	}
	sort.Strings(names)
	if len(names) > 0 && rng.IntN(5) != 0 {
		target = names[rng.IntN(len(names))]
		bad = consoleFuzzValues[rng.IntN(len(consoleFuzzValues))]
	}
	path = r.path
	for k, v := range r.segs {
		if target == "seg:"+k {
			v = bad
		}
		path = strings.ReplaceAll(path, "{"+k+"}", url.PathEscape(v))
	}
	values = url.Values{}
	for k, v := range r.fields {
		if target == k {
			v = bad
		}
		values.Set(k, v)
	}
	return path, values, target, bad
}

var errorMessageRE = regexp.MustCompile(`(?s)<p class="error" id="error">(.*?)</p>|class="error"[^>]*>(.*?)<`)

// fuzzState is a fingerprint of what a console action can change: the
// journal, merchants, cards, limits, BINs, rates, users, sessions ended,
// the sanctions list and deliveries.
func (f *fixture) fuzzState(t *testing.T) string {
	t.Helper()
	var s string
	err := f.g.DB().DB.QueryRow(`select concat_ws('|',
		(select count(*) from entries),
		(select md5(string_agg(m::text, ',' order by id)) from merchants m),
		(select md5(string_agg(c.card_no || c.status, ',' order by card_no)) from cards c),
		(select md5(coalesce(string_agg(l::text, ',' order by l::text), '')) from merchant_limits l),
		(select md5(coalesce(string_agg(b::text, ',' order by b::text), '')) from bins b),
		(select md5(coalesce(string_agg(b::text, ',' order by b::text), '')) from merchant_bins b),
		(select md5(coalesce(string_agg(x::text, ',' order by x::text), '')) from fx_rates x),
		(select md5(string_agg(u.login || u.disabled || u.password_hash, ',' order by id)) from console_users u),
		(select count(*) from sanctions_entries),
		(select md5(coalesce(string_agg(d.status || d.attempts, ',' order by d.merchant_id, d.event_seq), '')) from deliveries d))`).Scan(&s)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestConsoleHTTPFuzz checks every answer: never a 5xx; a 400 names the
// field it refuses (or, for a path segment, is the page of an unknown
// object, 404); whenever a request changed anything it left a row of the
// audit trail, and no row is left pending once the answer is back.
func TestConsoleHTTPFuzz(t *testing.T) {
	seed := *consoleFuzzSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("reproduce: go test ./internal/console -run 'TestConsoleHTTPFuzz$' -args -consolefuzz.seed=%d", seed)
		}
	})
	f := newFixture(t)
	routes := f.consoleFuzzRoutes(t)
	users := map[string]*webUser{}
	for _, r := range routes {
		if users[r.user] == nil {
			users[r.user] = newWebUser(t, f, r.user)
		}
	}
	rng := rand.New(rand.NewPCG(seed, 27))
	statuses := map[int]int{}
	changes, failures := 0, 0
	start := time.Now()
	for i := 0; i < *consoleFuzzN && time.Since(start) < consoleFuzzBudget; i++ {
		r := routes[rng.IntN(len(routes))]
		path, values, target, bad := r.build(rng)
		state, rows := f.fuzzState(t), f.countRows(t, "console_audit")
		var status int
		var body string
		if r.method == "GET" {
			status, body = users[r.user].get(t, path+"?"+values.Encode())
		} else {
			status, body = users[r.user].post(t, path, values)
		}
		statuses[status]++
		problem := f.fuzzProblem(t, r, status, body, target, state, rows)
		if f.fuzzState(t) != state {
			changes++
		}
		if problem != "" {
			if failures++; failures <= 20 {
				t.Errorf("seed %d, request %d: %s %s, %s = %q: %s", seed, i, r.method, path, target, clipQ(bad), problem)
			}
		}
	}
	t.Logf("seed %d: %d requests in %v, statuses %v, %d changed state", seed, sum(statuses),
		time.Since(start).Round(time.Millisecond), statuses, changes)
	if statuses[400] == 0 || changes == 0 {
		t.Errorf("statuses %v, %d changes: the run never refused a value or never acted", statuses, changes)
	}
}

// fuzzProblem is what is wrong with one answer ("" when nothing).
func (f *fixture) fuzzProblem(t *testing.T, r fuzzRoute, status int, body, target, state string, rows int) string {
	t.Helper()
	switch {
	case status == http.StatusServiceUnavailable && r.method == "POST" && r.path == "/audit/verify" &&
		strings.Contains(body, "An audit verify is running"):
		// One verify at a time: a start while an earlier request's run is
		// still going is refused 503 with Retry-After, as the product should
		// (seed 15 drew two starts within one run on a loaded machine).
	case status >= 500:
		return "answered " + http.StatusText(status)
	case status == http.StatusBadRequest:
		m := errorMessageRE.FindStringSubmatch(body)
		msg := ""
		if m != nil {
			msg = strings.ToLower(strings.ReplaceAll(m[1]+m[2], "_", ""))
		}
		field := strings.ToLower(strings.TrimPrefix(target, "seg:"))
		if msg == "" || (target != "" && !strings.HasPrefix(msg, field+":") && !strings.Contains(msg, field)) {
			return "a 400 that does not name the field: " + clipQ(body)
		}
	case strings.HasPrefix(target, "seg:") && status == http.StatusOK && r.method == "POST":
		// A malformed path segment names nothing that exists.
		return "a POST with a malformed path segment succeeded"
	}
	after := f.countRows(t, "console_audit")
	if f.fuzzState(t) != state && after == rows {
		return "the request changed state and left no audit row"
	}
	if n := f.countRows(t, "console_audit where outcome = 'pending'"); n != 0 {
		return "the answer came back with a pending audit row"
	}
	return ""
}

func sum(m map[int]int) (n int) {
	for _, v := range m {
		n += v
	}
	return n
}

func clipQ(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

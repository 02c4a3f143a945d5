package api

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/paygate/gateway/internal/callbackurl"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/postings"
)

// The HTTP fuzz run: several thousand malformed requests to every /shop
// route, from a seed. Reproduce a failure with the seed it prints:
//
//	go test ./api -run TestHTTPFuzz -args -httpfuzz.seed=N -httpfuzz.workers=1
var (
	httpFuzzSeed     = flag.Uint64("httpfuzz.seed", 0, "seed of TestHTTPFuzz; 0 takes one from the clock")
	httpFuzzRequests = flag.Int("httpfuzz.n", 3000, "requests TestHTTPFuzz sends")
	httpFuzzWorkers  = flag.Int("httpfuzz.workers", 4, "concurrent clients of TestHTTPFuzz; 1 checks the journal after every request")
)

// fuzzTarget is what the generator knows of the server: the routes, valid
// bodies to mutate, and ids worth naming.
type fuzzTarget struct {
	routes    []string // "METHOD path"
	templates map[string][]fuzzMember
	ids       []string // cards and remittances of both merchants, and unknown ones
	sh, other shop
}

// fuzzMember is one member of a body template, its value raw JSON.
type fuzzMember struct{ name, value string }

// fuzzRequest is one generated request.
type fuzzRequest struct {
	method, path, rawQuery string
	header                 http.Header
	body                   []byte
	chunked                bool
}

func (r *fuzzRequest) String() string {
	q := r.rawQuery
	if len(q) > 160 {
		q = q[:160] + fmt.Sprintf("…(%d bytes)", len(r.rawQuery))
	}
	b := r.body
	suffix := ""
	if len(b) > 200 {
		b, suffix = b[:200], fmt.Sprintf("…(%d bytes)", len(r.body))
	}
	var hs []string
	for name, vs := range r.header {
		for _, v := range vs {
			if len(v) > 60 {
				v = v[:60] + "…"
			}
			hs = append(hs, fmt.Sprintf("%s=%q", name, v))
		}
	}
	return fmt.Sprintf("%s %s?%s headers %v chunked %v body %q%s", r.method, r.path, q, hs, r.chunked, b, suffix)
}

// Every /shop route and method gets malformed requests: wrong types, huge
// numbers and exponents, negative zero, unicode and invalid UTF-8, nesting
// 10,000 deep, oversized bodies, missing, doubled and mis-cased headers,
// duplicate keys, injection attempts in the query, and values at the edge
// of every type's range (integers at ±2^31, ±2^63, 2^64; amounts of one
// minor unit and past the largest; days at 0000, 0001, 1970, 9999 and
// 10000, February 29 and 30; strings at and past each length; control,
// bidi and invisible characters). Every answer is the
// envelope with a code that matches its HTTP status (api/envelope.go), never
// a 500 or a panic, and the journal does not move.
func TestHTTPFuzz(t *testing.T) {
	// Not parallel: it sends thousands of requests from several clients; it runs alone, before the parallel tests,
	// so that it tests the server and not the machine.
	seed := *httpFuzzSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("reproduce: go test ./api -run 'TestHTTPFuzz$' -args -httpfuzz.seed=%d -httpfuzz.workers=1", seed)
		}
	})
	s := newTestServer(t, serverOptions{rateLimit: RateLimit{RPS: 1e6, Burst: 1_000_000}})
	tg := newFuzzTarget(s)
	before := s.journal()

	workers := max(*httpFuzzWorkers, 1)
	each := max(*httpFuzzRequests/workers, 1)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		failures int
		statuses = map[int]int{}
		codes    = map[int]int{}
	)
	start := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			for i := 0; i < each; i++ {
				req := tg.generate(rng)
				status, code, problem := s.fuzzSend(req)
				mu.Lock()
				statuses[status]++
				codes[code]++
				if problem != "" {
					failures++
					if failures <= 20 {
						t.Errorf("seed %d, worker %d, request %d: %s\n  request: %s", seed, w, i, problem, req)
					}
				}
				mu.Unlock()
				if workers == 1 {
					if after := s.journal(); after != before {
						t.Errorf("seed %d, request %d changed the journal:\n  request: %s\n  before %s\n  after  %s",
							seed, i, req, before, after)
						return
					}
				}
			}
		}(w)
	}
	wg.Wait()
	t.Logf("seed %d: %d requests in %v, HTTP statuses %v, envelope codes %v",
		seed, workers*each, time.Since(start).Round(time.Millisecond), statuses, codes)
	if after := s.journal(); after != before {
		t.Errorf("seed %d: refused requests changed the journal:\n  before %s\n  after  %s", seed, before, after)
	}
	logs := s.logs.String()
	for _, bad := range []string{`"level":"ERROR"`, `"msg":"panic"`} {
		if strings.Contains(logs, bad) {
			i := strings.Index(logs, bad)
			t.Errorf("seed %d: the server logged %s: %s", seed, bad, logs[max(0, i-400):min(len(logs), i+400)])
		}
	}
	// The run must have reached the decoders and the ledger, not only the
	// front door.
	if statuses[200] == 0 || statuses[400] == 0 {
		t.Errorf("seed %d: statuses %v: the run never got past authentication", seed, statuses)
	}
}

// Every edge value reaches every member of every body, and every pair of
// edge days the bill (JSON and CSV), at least once — the random run above
// may miss some: each answer is the envelope with a code matching its
// status, never a 5xx, and nothing moves.
func TestHTTPEdgeValues(t *testing.T) {
	// Not parallel: it sends every edge value to every route; it runs alone, before the parallel tests,
	// so that it tests the server and not the machine.
	s := newTestServer(t, serverOptions{rateLimit: RateLimit{RPS: 1e6, Burst: 1_000_000}})
	tg := newFuzzTarget(s)
	before := s.journal()
	auth := func() http.Header {
		return http.Header{"X-Shop-No": {tg.sh.creds.ShopNo}, "X-Public-Key": {tg.sh.creds.PublicKey}}
	}
	var reqs []*fuzzRequest
	values := append(append([]string(nil), fuzzEdgeNumbers...), fuzzEdgeStrings...)
	for path, members := range tg.templates {
		for i := range members {
			for _, v := range values {
				ms := append([]fuzzMember(nil), members...)
				ms[i].value = v
				reqs = append(reqs, &fuzzRequest{method: "POST", path: path, header: auth(), body: fuzzBody(ms)})
			}
		}
	}
	for _, start := range fuzzDays {
		for _, end := range fuzzDays {
			q := "startDate=" + url.QueryEscape(start) + "&endDate=" + url.QueryEscape(end)
			reqs = append(reqs, &fuzzRequest{method: "GET", path: "/shop/bill/list", rawQuery: q, header: auth()})
			h := auth()
			h.Set("Accept", "text/csv")
			reqs = append(reqs, &fuzzRequest{method: "GET", path: "/shop/bill/list", rawQuery: q + "&page=1000000&size=500", header: h})
		}
	}
	statuses := map[int]int{}
	failures := 0
	for _, r := range reqs {
		status, _, problem := s.fuzzSend(r)
		statuses[status]++
		if problem != "" {
			if failures++; failures <= 20 {
				t.Errorf("%s\n  request: %s", problem, r)
			}
		}
	}
	t.Logf("%d requests, HTTP statuses %v", len(reqs), statuses)
	if after := s.journal(); after != before {
		t.Errorf("refused requests changed the journal:\n  before %s\n  after  %s", before, after)
	}
	for _, line := range strings.Split(s.logs.String(), "\n") {
		if strings.Contains(line, `"msg":"internal error"`) || strings.Contains(line, `"msg":"panic"`) {
			t.Errorf("the server logged %s", line)
		}
	}
	if statuses[200] == 0 || statuses[400] == 0 {
		t.Errorf("statuses %v: the edges never reached the ledger, or were never refused", statuses)
	}
}

// fuzzBody writes members as a JSON object, values as they are.
func fuzzBody(ms []fuzzMember) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		nb, _ := json.Marshal(m.name)
		b.Write(nb)
		b.WriteByte(':')
		b.WriteString(m.value)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// newFuzzTarget sets up the merchants so that no request can succeed in
// moving anything: the fuzzed merchant has no funds, its one card is
// cancelled (final) and no BIN is open to it; the other merchant is funded
// and has an active card and a remittance, whose ids the fuzz sends too.
func newFuzzTarget(s *testServer) *fuzzTarget {
	s.t.Helper()
	ctx := context.Background()
	other := s.fundedShop()
	otherCard := s.createCard(other, `{"bin":"453201","currency":"USD","amount":"20.00"}`)
	otherRemit := s.createRemittance(other, remitBody(benDE, `"10.00"`, "EUR", ""))

	sh := s.newShop(merchant.Spec{Currencies: []string{"USD", "EUR"}})
	own := s.createCard(sh, `{"bin":"453201","currency":"USD","amount":0}`)
	s.request(&sh, "POST", "/shop/card/cancel", fmt.Sprintf(`{"cardNo":%q}`, own.CardNo)).must(s.t, 200, 200)
	bins, err := s.l.Cards.BINs(ctx)
	if err != nil {
		s.t.Fatal(err)
	}
	closed := false
	for _, b := range bins {
		if err := s.l.Cards.SetBINAccess(ctx, sh.m.ID, b.Bin, b.Currency, &closed); err != nil {
			s.t.Fatal(err)
		}
	}
	ids := []string{own.CardNo, otherCard.CardNo, otherRemit.TxID, "crd_" + strings.Repeat("0", 20), "rmt_" + strings.Repeat("9", 20)}
	card := func() string { return `"` + own.CardNo + `"` }
	return &fuzzTarget{
		routes: s.shopRoutes(),
		ids:    ids,
		sh:     sh,
		other:  other,
		templates: map[string][]fuzzMember{
			"/shop/card/create": {{"bin", `"453201"`}, {"currency", `"USD"`}, {"amount", `"1.00"`},
				{"remark", `"fuzz"`}, {"callback_url", `"https://shop.example.com/cb"`}},
			"/shop/card/transfer":      {{"cardNo", card()}, {"amount", `"1.00"`}, {"currency", `"USD"`}, {"direction", `"IN"`}},
			"/shop/card/freeze":        {{"cardNo", card()}, {"reason", `"lost"`}},
			"/shop/card/unfreeze":      {{"cardNo", card()}},
			"/shop/card/cancel":        {{"cardNo", card()}},
			"/shop/card/balance/batch": {{"cardNos", `[` + card() + `,"` + otherCard.CardNo + `"]`}},
			"/shop/remittance/create": {{"payer_id", `"payer-1"`}, {"beneficiary", benDE}, {"amount", `"10.00"`},
				{"currency", `"EUR"`}, {"purpose", `"SUPP"`}, {"callback_url", `"https://shop.example.com/cb"`}},
		},
	}
}

// Nasty values: numbers, strings and structures that decoders get wrong.
var (
	fuzzNumbers = []string{
		`1e999999`, `-1e999999`, `1e-999999`, `1E400`, `-0`, `-0.0`, `0e0`, `-0e-0`, `0.000000000000000000001`,
		`123456789012345678901234567890`, `9223372036854775807`, `9223372036854775808`, `-9223372036854775809`,
		`1.7976931348623157e308`, `4.9e-324`, `100000000000000.00`, `10000000000000.01`, `0.1`, `1.005`, `1`, `0`, `-1`,
	}
	fuzzStrings = []string{
		`""`, `" "`, `"1e5"`, `"1e999999"`, `"-0"`, `"0x10"`, `"Infinity"`, `"NaN"`, `"1.0.0"`, `" 1"`, `"1 "`, `"+1"`,
		`"１２３"`, `"١٢٣"`, `"\u0000"`, `"a\u0000b"`, `"\ud800"`, `"\udfff\ud800"`, `"\u202egnp.exe"`, `"💳💳💳"`,
		`"' OR 1=1 --"`, `"crd_'; DROP TABLE cards; --"`, `"${jndi:ldap://x.example/a}"`, `"<script>alert(1)</script>"`,
		`"../../etc/passwd"`, `"%00"`, `"crd_\\u0000"`, `"USD"`, `"usd"`, `"XXX"`, `"IN"`, `"in"`, `"OUT"`, `"SIDEWAYS"`,
		`"http://127.0.0.1/cb"`, `"https://169.254.169.254/latest/meta-data"`, `"javascript:alert(1)"`, `"https://u:p@x.example/"`,
		"\"\xff\xfe\xfd\"", "\"\xc3\x28\"", "\"\xed\xa0\x80\"", `"` + strings.Repeat("é", 300) + `"`, `"` + strings.Repeat("A", 5000) + `"`,
	}
	// Values at the edges of every type's range: integers at ±2^31, ±2^63
	// and 2^64, amounts of one minor unit and at and past the largest
	// (10^15 minor units), amount texts at and past 40 characters, and
	// huge and tiny exponents.
	fuzzEdgeNumbers = []string{
		`2147483647`, `2147483648`, `-2147483648`, `-2147483649`, `4294967295`, `4294967296`,
		`-9223372036854775808`, `18446744073709551615`, `18446744073709551616`, `-18446744073709551616`,
		`0.01`, `0.010`, `1e-2`, `1E-2`, `10e-3`, `0.001`, `0.0099999999999999999999`, `1`, `1.0`,
		`10000000000000`, `10000000000000.00`, `10000000000000.01`, `9999999999999.99`, `1e13`, `1e15`, `1e16`,
		`1000000000000000`, `999999999999999.9`, `1e+308`, `1e2147483647`, `1e-2147483648`, `1e9223372036854775808`,
		`0.` + strings.Repeat("0", 36) + `1`, strings.Repeat("9", 40), strings.Repeat("9", 41), `1` + strings.Repeat("0", 39),
		`0e999999999`, `-0.01`, `-1e-2`,
	}
	// Strings at and past each length bound (remark and reason 255
	// characters, beneficiary.name 140, cardNo and payer_id 64, purpose 24,
	// callback_url 2048 bytes), and the characters free text refuses: C0 and
	// C1 controls, bidi and invisible format characters, separators, U+FFFD,
	// noncharacters, unpaired surrogates and invalid UTF-8.
	fuzzEdgeStrings = []string{
		`"` + strings.Repeat("é", 255) + `"`, `"` + strings.Repeat("é", 256) + `"`,
		`"` + strings.Repeat("💳", 140) + `"`, `"` + strings.Repeat("a", 141) + `"`, `"` + strings.Repeat("Ab", 70) + `"`,
		`"crd_` + strings.Repeat("0", 60) + `"`, `"crd_` + strings.Repeat("0", 61) + `"`,
		`"` + strings.Repeat("p", 64) + `"`, `"` + strings.Repeat("p", 65) + `"`, `"` + strings.Repeat("P", 24) + `"`, `"` + strings.Repeat("P", 25) + `"`,
		`"https://shop.example.com/` + strings.Repeat("a", 2048-len("https://shop.example.com/")) + `"`,
		`"https://shop.example.com/` + strings.Repeat("a", 2049-len("https://shop.example.com/")) + `"`,
		`"\u0001"`, `"a\u001fb"`, `"\t"`, `"a\nb"`, `"\r\n"`, `"\u007f"`, `"\u0080"`, `"\u0085"`, `"\u009f"`, "\"\xc2\x85\"", "\"\xc2\x9b31m\"",
		`"\u001b[2J"`, `"\u202a"`, `"\u202b"`, `"\u202c"`, `"\u202d"`, `"x\u2066y"`, `"\u2067"`, `"\u2068"`, `"\u2069"`,
		`"\u200e"`, `"\u200f"`, `"\u061c"`, `"\u200b"`, `"\u00ad"`, `"\ufeff"`, `"\u2028"`, `"\u2029"`, `"\ufffd"`,
		`"\uffff"`, `"\ufdd0"`, `"\udb40\udc41"`, `"\udc00"`, `"\ud83dA"`, `"\ud83d\udcb3"`, `"👩\u200d💻"`,
		"\"\xf4\x90\x80\x80\"", "\"\xc0\xaf\"", "\"\xe2\x82\"", "\"a\x00b\"",
		`"http://localhost/cb"`, `"http://[::1]:8080/cb"`, `"http://2130706433/cb"`, `"http://0x7f.1/"`, `"http://10.0.0.1/"`,
		`"https://shop.example.com:0/"`, `"https://shop.example.com:65535/"`, `"https://shop.example.com:65536/"`, `"https://shop.example.com:/"`,
		`"http://[fe80::1%25eth0]/"`, `"http://metadata.google.internal/"`, `"https://shop.example.com/\u202e"`, `"HTTPS://SHOP.EXAMPLE/"`,
		`"0.01"`, `"1e-2"`, `"10000000000000.00"`, `"10000000000000.01"`, `"` + strings.Repeat("9", 41) + `"`,
	}
	fuzzOthers = []string{`true`, `false`, `null`, `[]`, `{}`, `[1]`, `["a"]`, `{"a":1}`, `[null]`, `{"":""}`,
		strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
		strings.Repeat(`{"a":`, 10000) + `1` + strings.Repeat(`}`, 10000),
	}
	fuzzQueryValues = []string{
		"' OR 1=1 --", "1' OR '1'='1", "crd_x'; DROP TABLE entries; --", "%00", "%ff%fe", "%zz", "%", "%2", "a%00b",
		"%E2%80%AE", "карта", "💳", "../..%2f..%2fetc%2fpasswd", "${jndi:ldap://x}", "<script>", "-0", "1e999999", "NaN",
		"99999999999999999999", "0x10", "", "2025-02-30", "9999-12-31", "0000-01-01", "2025-1-1", "2025-01-01T00:00:00Z",
		"DE", "EUR", "de", "XX", "1", "0", "-1", "500", "501", "1000001",
		// Edges of the integer and day ranges.
		"1000000", "999999", "000000001", "0000000001", "2147483647", "2147483648", "-2147483648", "4294967296",
		"9223372036854775807", "9223372036854775808", "-9223372036854775808", "18446744073709551616", "1e3", "0x1f4", "+1", " 1",
	}
	// fuzzDays are days at and past the edges of the accepted range
	// (1970-01-01 to 9999-12-31), ones PostgreSQL cannot hold (year 0000),
	// five-digit years, and February 29 and 30.
	fuzzDays = []string{
		"0000-01-01", "0000-12-31", "0001-01-01", "1969-12-31", "1970-01-01", "1970-01-02", "2000-02-29", "2024-02-29",
		"2025-02-29", "2024-02-30", "1900-02-29", "2025-04-31", "2025-12-32", "2025-00-01", "2025-13-01", "9999-12-30",
		"9999-12-31", "10000-01-01", "99999-12-31", "+2025-01-01", "-0001-01-01", "2025-01-01", "2025-12-31", "2026-01-01",
	}
	fuzzQueryNames = []string{"cardNo", "txId", "startDate", "endDate", "page", "size", "country", "currency", "cardNo[]", "", "CARDNO"}
)

func pick[T any](rng *rand.Rand, list []T) T { return list[rng.IntN(len(list))] }

// fuzzValue is a random raw JSON value.
func (tg *fuzzTarget) fuzzValue(rng *rand.Rand) string {
	switch rng.IntN(7) {
	case 0:
		return pick(rng, fuzzNumbers)
	case 1:
		return `"` + pick(rng, tg.ids) + `"`
	case 2:
		return pick(rng, fuzzOthers)
	case 3:
		return pick(rng, fuzzEdgeNumbers)
	case 4:
		return pick(rng, fuzzEdgeStrings)
	default:
		return pick(rng, fuzzStrings)
	}
}

// generate makes one malformed request.
func (tg *fuzzTarget) generate(rng *rand.Rand) *fuzzRequest {
	route := pick(rng, tg.routes)
	method, path, _ := strings.Cut(route, " ")
	r := &fuzzRequest{method: method, path: path, header: http.Header{}}
	switch n := rng.IntN(100); {
	case n < 6:
		r.method = pick(rng, []string{"GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "PROPFIND"})
	case n < 10:
		r.path = pick(rng, []string{path + "/", strings.ToUpper(path), path + "%00", "/shop//" + strings.TrimPrefix(path, "/shop/"),
			"/shop/../shop/account", "/shop/card/" + pick(rng, tg.ids), path + ";x=1", "/shop/" + strings.Repeat("a/", 500)})
	}
	tg.headers(rng, r)
	if rng.IntN(100) < 70 || r.method == "GET" {
		r.rawQuery = tg.query(rng)
	}
	if r.method != "GET" || rng.IntN(10) == 0 {
		r.body = tg.body(rng, path)
	}
	r.chunked = rng.IntN(8) == 0
	return r
}

func (tg *fuzzTarget) headers(rng *rand.Rand, r *fuzzRequest) {
	h := r.header
	shopNo, key := tg.sh.creds.ShopNo, tg.sh.creds.PublicKey
	switch n := rng.IntN(100); {
	case n < 72:
		h["X-Shop-No"], h["X-Public-Key"] = []string{shopNo}, []string{key}
	case n < 76:
		h["x-shop-no"], h["X-PUBLIC-KEY"] = []string{shopNo}, []string{key}
	case n < 80:
		h["X-Public-Key"] = []string{key}
	case n < 83:
		h["X-Shop-No"] = []string{shopNo}
	case n < 87:
		h["X-Shop-No"], h["X-Public-Key"] = []string{shopNo, tg.other.creds.ShopNo}, []string{key}
	case n < 89:
		h["X-Shop-No"], h["x-shop-no"], h["X-Public-Key"] = []string{shopNo}, []string{shopNo}, []string{key}
	case n < 91:
		h["X-Shop-No"], h["X-Public-Key"] = []string{shopNo}, []string{key, key}
	case n < 94:
		h["X-Shop-No"], h["X-Public-Key"] = []string{shopNo}, []string{tg.other.creds.PublicKey}
	case n < 96:
		h["X-Shop-No"], h["X-Public-Key"] = []string{pick(rng, []string{"' OR 1=1 --", "SH\xff", strings.Repeat("9", 300), "%00"})}, []string{key}
	default:
		h["X-Shop-No"], h["X-Public-Key"] = []string{tg.other.creds.ShopNo}, []string{key}
	}
	if rng.IntN(4) == 0 {
		h["Idempotency-Key"] = []string{pick(rng, []string{"fuzz-1", "fuzz-2", "", strings.Repeat("k", 255), strings.Repeat("k", 256), "ключ",
			"' OR 1=1 --", "a\tb"})}
		if rng.IntN(5) == 0 {
			h["idempotency-key"] = []string{"fuzz-3"}
		}
	}
	if rng.IntN(4) == 0 {
		h["Content-Type"] = []string{pick(rng, []string{"application/json", "text/plain", "application/x-www-form-urlencoded",
			"multipart/form-data; boundary=x", "application/json; charset=utf-16", "application/xml", ""})}
	}
	if rng.IntN(6) == 0 {
		h["Accept"] = []string{pick(rng, []string{"text/csv", "text/csv;q=0", "text/html", "*/*", "application/json;q=abc"})}
	}
	if rng.IntN(8) == 0 {
		h["X-Forwarded-For"] = []string{pick(rng, []string{"10.0.0.1", "not-an-ip", "1.1.1.1, 2.2.2.2", strings.Repeat("1.1.1.1,", 200)})}
	}
	if rng.IntN(10) == 0 {
		h["X-Request-Id"] = []string{pick(rng, []string{"' OR 1=1 --", strings.Repeat("r", 200), "req\x80", "4111111111111111"})}
	}
}

func (tg *fuzzTarget) query(rng *rand.Rand) string {
	if rng.IntN(4) == 0 {
		// A well-formed bill query with days and page bounds at the edges,
		// so that the edges reach the ledger, not only the parser.
		q := "startDate=" + url.QueryEscape(pick(rng, fuzzDays)) + "&endDate=" + url.QueryEscape(pick(rng, fuzzDays))
		if rng.IntN(2) == 0 {
			q += "&page=" + pick(rng, []string{"1", "2", "1000000", "1000001", "2147483648", "9223372036854775808", "0"})
		}
		if rng.IntN(2) == 0 {
			q += "&size=" + pick(rng, []string{"1", "499", "500", "501", "2147483648", "18446744073709551616", "0"})
		}
		return q
	}
	var parts []string
	for i := rng.IntN(4) + 1; i > 0; i-- {
		name := pick(rng, fuzzQueryNames)
		var v string
		switch rng.IntN(6) {
		case 0:
			v = url.QueryEscape(pick(rng, tg.ids))
		case 1:
			v = strings.Repeat(pick(rng, []string{"A", "%41", "9", "%00"}), 1000+rng.IntN(20000))
		case 2:
			v = url.QueryEscape(pick(rng, fuzzQueryValues))
		case 3:
			v = url.QueryEscape(pick(rng, fuzzDays))
		default:
			// As written: raw escapes, bad escapes. Bytes a request line
			// cannot carry are escaped; the server's own parser (before the
			// gateway) would refuse them in plain text.
			v = pick(rng, fuzzQueryValues)
			if !isPrintableASCII(v) {
				v = url.QueryEscape(v)
			}
		}
		parts = append(parts, url.QueryEscape(name)+"="+strings.NewReplacer(" ", "+", "'", "%27", "<", "%3C", ">", "%3E").Replace(v))
	}
	return strings.Join(parts, "&")
}

// body mutates the route's template, or writes something else entirely.
func (tg *fuzzTarget) body(rng *rand.Rand, path string) []byte {
	members, ok := tg.templates[path]
	if !ok || rng.IntN(4) == 0 {
		return tg.rawBody(rng)
	}
	ms := append([]fuzzMember(nil), members...)
	for n := rng.IntN(3) + 1; n > 0; n-- {
		i := rng.IntN(len(ms))
		switch rng.IntN(7) {
		case 0, 1, 2:
			ms[i].value = tg.fuzzValue(rng)
		case 3:
			ms = append(ms[:i], ms[i+1:]...) // a field missing
			if len(ms) == 0 {
				return []byte(`{}`)
			}
		case 4:
			ms = append(ms, fuzzMember{ms[i].name, tg.fuzzValue(rng)}) // a duplicate key
		case 5:
			ms[i].name = pick(rng, []string{strings.ToUpper(ms[i].name), ms[i].name + "\u0000", "__proto__", "pan", "", "cardno"})
		case 6:
			ms = append(ms, fuzzMember{"beneficiary", `{"name":` + tg.fuzzValue(rng) + `,"country":"DE","name":"x"}`})
		}
	}
	b := fuzzBody(ms)
	switch rng.IntN(12) {
	case 0:
		b = append(b, ` {"cardNo":"x"}`...) // two objects
	case 1:
		return append([]byte("\xef\xbb\xbf"), b...) // a byte-order mark
	case 2:
		return b[:rng.IntN(len(b))] // truncated
	}
	return b
}

func (tg *fuzzTarget) rawBody(rng *rand.Rand) []byte {
	switch rng.IntN(16) {
	case 0:
		return nil
	case 1:
		return []byte(strings.Repeat("[", 10000) + strings.Repeat("]", 10000))
	case 2:
		return []byte(strings.Repeat(`{"cardNo":`, 10000) + `"x"` + strings.Repeat("}", 10000))
	case 3:
		return []byte(`{"cardNo":"` + strings.Repeat("x", BodyBytesMaxDefault) + `"}`) // over the limit
	case 4:
		return []byte{0xff, 0xfe, '{', 0, '}', 0}
	case 5:
		return []byte(`cardNo=crd_x&amount=1`)
	case 6:
		return []byte(`<xml><cardNo>x</cardNo></xml>`)
	case 7:
		return []byte(`{'cardNo':'x'}`)
	case 8:
		return []byte(`{"amount":01,"cardNo":"x"}`)
	case 9:
		return []byte(`{"amount":.5} /* comment */`)
	case 10:
		return []byte(`{"cardNo":"x"}` + "\x00")
	case 11:
		return []byte(pick(rng, fuzzOthers))
	case 12:
		return []byte(pick(rng, fuzzNumbers))
	case 13:
		return []byte(pick(rng, fuzzStrings))
	case 14:
		b := make([]byte, rng.IntN(512))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		return b
	}
	return []byte(`{"cardNos":[` + strings.Repeat(`"crd_x",`, 150) + `"crd_x"]}`)
}

// fuzzSend sends r and checks the answer; problem is empty when it is right.
func (s *testServer) fuzzSend(r *fuzzRequest) (status, code int, problem string) {
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
		if r.chunked {
			body = io.NopCloser(body) // no length: sent chunked
		}
	}
	req, err := http.NewRequest(r.method, s.srv.URL, body)
	if err != nil {
		return 0, 0, "building the request: " + err.Error()
	}
	req.URL.Path, req.URL.RawPath = r.path, ""
	if strings.Contains(r.path, "%") {
		if p, err := url.PathUnescape(r.path); err == nil {
			req.URL.Path, req.URL.RawPath = p, r.path
		}
	}
	req.URL.RawQuery = r.rawQuery
	for name, vs := range r.header {
		req.Header[name] = vs
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, 0, "no answer (did the server drop the connection?): " + err.Error()
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, 0, "reading the answer: " + err.Error()
	}
	code, problem = checkEnvelope(resp, raw)
	return resp.StatusCode, code, problem
}

// fuzzStatuses are the HTTP statuses a malformed request may get.
var fuzzStatuses = map[int]bool{200: true, 400: true, 401: true, 403: true, 404: true, 405: true, 413: true, 429: true, 431: true}

// businessCodes are the envelope codes of HTTP 200 answers, from the tables
// of api/envelope.go.
func businessCodes() map[int]bool {
	codes := map[int]bool{codeOK: true, codeFailure: true}
	for _, o := range errorReasons {
		if o.status == http.StatusOK {
			codes[o.code] = true
		}
	}
	for _, o := range errorCodes {
		if o.status == http.StatusOK {
			codes[o.code] = true
		}
	}
	return codes
}

// checkEnvelope checks an answer against the rules of api/envelope.go.
func checkEnvelope(resp *http.Response, raw []byte) (code int, problem string) {
	status, ct := resp.StatusCode, resp.Header.Get("Content-Type")
	if !fuzzStatuses[status] {
		return 0, fmt.Sprintf("HTTP %d: %s", status, raw)
	}
	if resp.Header.Get("X-Request-Id") == "" {
		return 0, "no X-Request-Id"
	}
	if status == 200 && strings.HasPrefix(ct, "text/csv") {
		return 200, "" // the bill as CSV
	}
	if ct != "application/json; charset=utf-8" {
		return 0, fmt.Sprintf("HTTP %d Content-Type %q: %s", status, ct, raw)
	}
	if !utf8.Valid(raw) {
		return 0, fmt.Sprintf("answer is not UTF-8: %q", raw)
	}
	var env map[string]json.RawMessage
	if err := json.Unmarshal(raw, &env); err != nil || len(env) != 3 || env["code"] == nil || env["message"] == nil || env["data"] == nil {
		return 0, fmt.Sprintf("not the envelope: %s", raw)
	}
	var message string
	if json.Unmarshal(env["code"], &code) != nil || json.Unmarshal(env["message"], &message) != nil || message == "" {
		return 0, fmt.Sprintf("envelope of the wrong types: %s", raw)
	}
	switch {
	case status != 200 && code != status:
		return 0, fmt.Sprintf("HTTP %d with code %d: %s", status, code, raw)
	case status == 200 && !businessCodes()[code]:
		return 0, fmt.Sprintf("HTTP 200 with code %d, in no table: %s", code, raw)
	case code != codeOK && string(env["data"]) != "null":
		return 0, fmt.Sprintf("failure with data: %s", raw)
	case status == 429 && resp.Header.Get("Retry-After") == "":
		return 0, "429 without Retry-After"
	}
	return code, ""
}

// Go fuzz targets for the request decoders FuzzDecoders (decode_test.go)
// does not reach: the remittance body, the card body without a reason
// (unfreeze, cancel) and the bill query.

// FuzzDecodeRemittanceCreate: no panic; a refusal is a 400 naming a field;
// what is accepted is a positive amount in a known currency with a fee.
func FuzzDecodeRemittanceCreate(f *testing.F) {
	for _, seed := range []string{
		remitBody(benDE, `"100.00"`, "EUR", ""),
		remitBody(benUS, `12.5`, "USD", `,"purpose":"SUPP"`),
		remitBody(benIN, `"1e3"`, "INR", `,"callback_url":"https://a.example.com/"`),
		remitBody(`{"name":"x","name":"y"}`, `1`, "EUR", ""),
		remitBody(`{"name":null,"country":1}`, `-0`, "EUR", ""),
		remitBody(benDE, `1e999999`, "EUR", ""),
		`{"beneficiary":` + strings.Repeat(`{"a":`, 50) + `}`,
		``, `{}`, `[]`, "{\"payer_id\":\"\xff\"}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		in, err := decodeRemittanceCreate(raw, callbackurl.AllowList{})
		if err != nil {
			e, o := classify(err)
			if o.status != 400 || e.Field == "" {
				t.Fatalf("refusal is not a 400 naming a field: %#v", err)
			}
			return
		}
		cur, cerr := postings.LookupCurrency(in.Currency)
		if cerr != nil || in.Amount <= 0 || in.Amount > postings.AmountMinorMax || in.Fee < 0 || in.Rail == "" ||
			!json.Valid(in.Beneficiary) || cur.Code != in.Currency {
			t.Fatalf("accepted %+v", in)
		}
	})
}

// FuzzDecodeCardRequest: unfreeze and cancel take exactly what freeze takes
// less the reason.
func FuzzDecodeCardRequest(f *testing.F) {
	for _, seed := range []string{`{"cardNo":"crd_1"}`, `{"cardNo":"crd_1","reason":"x"}`, `{"cardNo":"crd_1","reason":null}`,
		`{"cardNo":"a","cardNo":"a"}`, `{"cardNo":"` + strings.Repeat("c", 65) + `"}`, `{"reason":"x"}`, ``} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		bare, err := decodeCardRequest(raw, false)
		if err != nil {
			if e, o := classify(err); o.status != 400 || e.Field == "" {
				t.Fatalf("refusal is not a 400 naming a field: %#v", err)
			}
			return
		}
		full, err := decodeCardRequest(raw, true)
		if err != nil || full.CardNo != bare.CardNo || bare.Reason != "" || !postings.IsRefText(bare.CardNo) {
			t.Fatalf("without reason %+v, with reason %+v, %v", bare, full, err)
		}
	})
}

// FuzzBillQuery: no panic; a refusal is a 400 naming a parameter; what is
// accepted is a range of 1 to 366 days within the accepted days and a page
// within bounds.
func FuzzBillQuery(f *testing.F) {
	for _, seed := range []string{"startDate=2025-01-01&endDate=2025-01-31", "startDate=2025-01-01&endDate=2025-01-01&page=2&size=500",
		"startDate=2025-02-30&endDate=2025-03-01", "startDate=2024-01-01&endDate=2025-01-01", "startDate=x&endDate=y&page=-1",
		"startDate=2025-01-01&startDate=2025-01-02&endDate=2025-01-03", "page=99999999999999999999", "%zz", "",
		"startDate=0000-01-01&endDate=0000-01-02", "startDate=9999-12-31&endDate=9999-12-31", "startDate=1970-01-01&endDate=1970-01-01"} {
		f.Add(seed)
	}
	gin.SetMode(gin.ReleaseMode)
	f.Fuzz(func(t *testing.T, rawQuery string) {
		c, _ := gin.CreateTestContext(httptest.NewRecorder())
		c.Request = &http.Request{Method: "GET", URL: &url.URL{Path: "/shop/bill/list", RawQuery: rawQuery}, Header: http.Header{}}
		q, err := parseBillQuery(c)
		if err != nil {
			if e, o := classify(err); o.status != 400 || e.Field == "" {
				t.Fatalf("refusal is not a 400 naming a parameter: %#v", err)
			}
			return
		}
		if q.end.Before(q.start) || q.end.Sub(q.start) >= billDaysMax*24*time.Hour ||
			q.start.Before(postings.DayMin) || q.end.After(postings.DayMax) ||
			q.page < 1 || q.page > billPageMax || q.size < 1 || q.size > billSizeMax {
			t.Fatalf("accepted %+v", q)
		}
	})
}

package api

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/gin-gonic/gin"

	"github.com/paygate/gateway/api/views"
	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/delivery"
	"github.com/paygate/gateway/internal/httplimits"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/internal/remittance"
)

// The contract test: docs/openapi.yaml against the real server. Every
// answer the tests below get is checked against the document — the status
// is one the operation declares, the body matches the response schema
// (required fields, types, enums, patterns, and no field the schema does not
// list), X-Request-Id is there — and every request the server accepts (HTTP
// 200) must be one the document accepts too. A handler whose answer drifts
// from the document, or a /shop route the document does not describe,
// fails here.

// openAPIPath is the document, relative to this package (go:embed cannot
// reach ../docs).
var openAPIPath = filepath.Join("..", "docs", "openapi.yaml")

var (
	openAPIOnce sync.Once
	openAPIDoc  *openapi3.T
	openAPIErr  error
)

// loadOpenAPI loads and validates the document once per test binary.
func loadOpenAPI(t testing.TB) *openapi3.T {
	t.Helper()
	openAPIOnce.Do(func() {
		loader := openapi3.NewLoader()
		openAPIDoc, openAPIErr = loader.LoadFromFile(openAPIPath)
		if openAPIErr == nil {
			openAPIErr = openAPIDoc.Validate(loader.Context)
		}
	})
	if openAPIErr != nil {
		t.Fatalf("%s: %v", openAPIPath, openAPIErr)
	}
	return openAPIDoc
}

// contract checks answers of a testServer against the document and counts
// what each operation has been seen to answer.
type contract struct {
	t   *testing.T
	s   *testServer
	doc *openapi3.T

	mu      sync.Mutex
	answers map[string]map[string]bool // "GET /shop/account" → {"200/200", "200/1002", "401/401"}
}

func newContract(t *testing.T, s *testServer) *contract {
	return &contract{t: t, s: s, doc: loadOpenAPI(t), answers: map[string]map[string]bool{}}
}

// newRequest builds a request as testServer.request does: the shop's
// credentials, then headers as name, value pairs sent as given ("\x00delete"
// removes one).
func (c *contract) newRequest(sh *shop, method, path, body string, headers ...string) *http.Request {
	c.t.Helper()
	req, err := http.NewRequest(method, c.s.srv.URL+path, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	if body == "" {
		req.Body, req.ContentLength = http.NoBody, 0
	} else {
		req.Header.Set("Content-Type", "application/json")
	}
	if sh != nil {
		req.Header.Set("X-Shop-No", sh.creds.ShopNo)
		req.Header.Set("X-Public-Key", sh.creds.PublicKey)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i+1] == "\x00delete" {
			req.Header.Del(headers[i])
			continue
		}
		req.Header[headers[i]] = append(req.Header[headers[i]], headers[i+1])
	}
	return req
}

// call sends a request and checks the answer, an envelope, against the
// document.
func (c *contract) call(sh *shop, method, path, body string, headers ...string) *answer {
	c.t.Helper()
	req := c.newRequest(sh, method, path, body, headers...)
	checked := req.Clone(context.Background())
	a := c.s.send(req)
	if err := c.check(checked, []byte(body), a.status, a.header, a.raw); err != nil {
		c.t.Errorf("%s %s → HTTP %d: the answer does not match %s: %v\nbody: %s", method, path, a.status, openAPIPath, err, a.raw)
	}
	return a
}

// callRaw sends a GET whose answer need not be JSON (the CSV bill) and
// checks it against the document.
func (c *contract) callRaw(sh *shop, path string, headers ...string) (int, http.Header, []byte) {
	c.t.Helper()
	req := c.newRequest(sh, "GET", path, "", headers...)
	checked := req.Clone(context.Background())
	resp, err := c.s.client.Do(req)
	if err != nil {
		c.t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	if err := c.check(checked, nil, resp.StatusCode, resp.Header, raw); err != nil {
		c.t.Errorf("GET %s → HTTP %d: the answer does not match %s: %v\nbody: %s", path, resp.StatusCode, openAPIPath, err, raw)
	}
	return resp.StatusCode, resp.Header, raw
}

// check validates one exchange. It returns the first disagreement.
func (c *contract) check(req *http.Request, reqBody []byte, status int, header http.Header, raw []byte) error {
	ctx := context.Background()
	if header.Get("X-Request-Id") == "" {
		return fmt.Errorf("no X-Request-Id header")
	}
	tmpl, params := c.matchPath(req.URL.Path)
	pathItem := c.doc.Paths.Find(tmpl)
	var op *openapi3.Operation
	if pathItem != nil {
		op = pathItem.GetOperation(req.Method)
	}
	if op == nil {
		// Not an operation of the document: the answer must be the 404 or
		// 405 that components/schemas/HTTPFailure describes.
		switch {
		case pathItem == nil && status == http.StatusNotFound:
			return c.checkFailure(status, "no such endpoint", header, raw)
		case pathItem != nil && status == http.StatusMethodNotAllowed:
			return c.checkFailure(status, "method "+req.Method+" not allowed on this endpoint", header, raw)
		}
		return fmt.Errorf("%s %s is not an operation of the document, and HTTP %d is neither its 404 nor its 405", req.Method, req.URL.Path, status)
	}
	in := &openapi3filter.RequestValidationInput{
		Request:    req,
		Route:      &routers.Route{Spec: c.doc, Path: tmpl, PathItem: pathItem, Method: req.Method, Operation: op},
		PathParams: params,
		Options:    &openapi3filter.Options{MultiError: true, AuthenticationFunc: headersPresent},
	}
	if status == http.StatusOK {
		// The server accepted this request: the document must accept it.
		req.Body = io.NopCloser(bytes.NewReader(reqBody))
		if err := openapi3filter.ValidateRequest(ctx, in); err != nil {
			return fmt.Errorf("the server accepted a request the document refuses: %w", err)
		}
	}
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in, Status: status, Header: header,
		Options: &openapi3filter.Options{MultiError: true, IncludeResponseStatus: true},
	}
	out.SetBodyBytes(raw)
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
		return err
	}
	c.record(req.Method+" "+tmpl, status, raw)
	return nil
}

// matchPath finds the document's path for a concrete one: itself when the
// document has it (a literal path wins over a template, as the router's),
// else the template whose {param} segments take the concrete ones, with
// the values. No match gives the path itself.
func (c *contract) matchPath(path string) (string, map[string]string) {
	if c.doc.Paths.Value(path) != nil {
		return path, nil
	}
	segs := strings.Split(path, "/")
	for _, tmpl := range c.doc.Paths.InMatchingOrder() {
		ts := strings.Split(tmpl, "/")
		if len(ts) != len(segs) || !strings.Contains(tmpl, "{") {
			continue
		}
		params := map[string]string{}
		for i := range ts {
			if strings.HasPrefix(ts[i], "{") && strings.HasSuffix(ts[i], "}") && segs[i] != "" {
				params[ts[i][1:len(ts[i])-1]] = segs[i]
			} else if ts[i] != segs[i] {
				params = nil
				break
			}
		}
		if params != nil {
			return tmpl, params
		}
	}
	return path, nil
}

// headersPresent is the document's security for request validation: both
// apiKey headers are there (the server decides whether they are right).
func headersPresent(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	s := in.SecurityScheme
	if s.Type != "apiKey" || s.In != "header" {
		return fmt.Errorf("security scheme %s: only apiKey headers are expected", in.SecuritySchemeName)
	}
	if in.RequestValidationInput.Request.Header.Get(s.Name) == "" {
		return fmt.Errorf("no %s header", s.Name)
	}
	return nil
}

// checkComponent validates an answer against components/responses/name.
func (c *contract) checkComponent(name string, header http.Header, raw []byte) error {
	ref := c.doc.Components.Responses[name]
	if ref == nil || ref.Value == nil {
		return fmt.Errorf("components/responses/%s is missing", name)
	}
	mt := ref.Value.Content.Get(header.Get("Content-Type"))
	if mt == nil || mt.Schema == nil {
		return fmt.Errorf("components/responses/%s has no schema for %q", name, header.Get("Content-Type"))
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return err
	}
	if err := mt.Schema.Value.VisitJSON(v, openapi3.EnableJSONSchema2020(), openapi3.VisitAsResponse(), openapi3.MultiErrors()); err != nil {
		return fmt.Errorf("components/responses/%s: %w", name, err)
	}
	return nil
}

// checkFailure validates an answer outside the operations against
// components/schemas/HTTPFailure, with its code and message.
func (c *contract) checkFailure(status int, message string, header http.Header, raw []byte) error {
	ref := c.doc.Components.Schemas["HTTPFailure"]
	if ref == nil || ref.Value == nil {
		return fmt.Errorf("components/schemas/HTTPFailure is missing")
	}
	if ct := header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		return fmt.Errorf("HTTP %d answered %q", status, ct)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return err
	}
	if err := ref.Value.VisitJSON(v, openapi3.EnableJSONSchema2020(), openapi3.VisitAsResponse(), openapi3.MultiErrors()); err != nil {
		return fmt.Errorf("components/schemas/HTTPFailure: %w", err)
	}
	var env struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(raw, &env); err != nil || env.Code != status || env.Message != message {
		return fmt.Errorf("HTTP %d answered %s, want code %d and message %q", status, raw, status, message)
	}
	return nil
}

// record notes "HTTP status/envelope code" for an operation.
func (c *contract) record(op string, status int, raw []byte) {
	var env struct {
		Code int `json:"code"`
	}
	_ = json.Unmarshal(raw, &env)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.answers[op] == nil {
		c.answers[op] = map[string]bool{}
	}
	c.answers[op][fmt.Sprintf("%d/%d", status, env.Code)] = true
}

// checkCoverage fails unless every operation of the document under /shop was
// seen succeeding and failing at least once.
func (c *contract) checkCoverage() {
	c.t.Helper()
	for _, path := range c.doc.Paths.InMatchingOrder() {
		for method := range c.doc.Paths.Value(path).Operations() {
			op := method + " " + path
			seen := c.answers[op]
			if !seen["200/200"] {
				c.t.Errorf("%s: no success checked against the document", op)
			}
			failed := false
			for k := range seen {
				failed = failed || k != "200/200"
			}
			if !failed {
				c.t.Errorf("%s: no failure checked against the document", op)
			}
		}
	}
}

// checkRoutes fails unless the /shop routes of the server and the
// operations of the document are the same set.
func (c *contract) checkRoutes() {
	c.t.Helper()
	engine, ok := c.s.srv.Config.Handler.(*gin.Engine)
	if !ok {
		c.t.Fatalf("the server's handler is a %T, not a *gin.Engine", c.s.srv.Config.Handler)
	}
	served := map[string]bool{}
	for _, r := range engine.Routes() {
		if strings.HasPrefix(r.Path, "/shop/") {
			// gin's :param is the document's {param}.
			p := r.Path
			for _, seg := range strings.Split(p, "/") {
				if strings.HasPrefix(seg, ":") {
					p = strings.Replace(p, seg, "{"+seg[1:]+"}", 1)
				}
			}
			served[r.Method+" "+p] = true
		}
	}
	documented := map[string]bool{}
	for _, path := range c.doc.Paths.InMatchingOrder() {
		for method := range c.doc.Paths.Value(path).Operations() {
			documented[method+" "+path] = true
		}
	}
	for _, r := range sortedKeys(served) {
		if !documented[r] {
			c.t.Errorf("route %s is served but not in %s", r, openAPIPath)
		}
	}
	for _, r := range sortedKeys(documented) {
		if !served[r] {
			c.t.Errorf("%s documents %s, which the server does not serve", openAPIPath, r)
		}
	}
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestOpenAPIDocument drives every /shop endpoint through success and
// representative failures (400, 401, 403, 404, 405, 413, business codes)
// and checks every answer against docs/openapi.yaml.
func TestOpenAPIDocument(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, serverOptions{})
	c := newContract(t, s)
	c.checkRoutes()
	ctx := context.Background()

	sh := s.fundedShop()
	other := s.fundedShop()
	if err := s.l.SetCallbackURL(ctx, sh.m.ID, "https://merchant.example.com/paygate/callbacks"); err != nil {
		t.Fatal(err)
	}

	// Account and BINs.
	var acct struct {
		LastAuthenticatedAt *string `json:"lastAuthenticatedAt"`
	}
	c.call(&sh, "GET", "/shop/account", "").must(t, 200, 200).into(t, &acct)
	if acct.LastAuthenticatedAt == nil {
		t.Error("lastAuthenticatedAt is null after an authentication")
	}
	var bins []views.BIN
	c.call(&sh, "GET", "/shop/card/bin/list", "").must(t, 200, 200).into(t, &bins)
	if len(bins) == 0 {
		t.Fatal("no BIN open to the merchant")
	}

	// Authentication: 400, 401, 403 (disabled, whitelist).
	c.call(nil, "GET", "/shop/account", "").must(t, 400, 400)
	c.call(nil, "GET", "/shop/card/bin/list", "", "X-Shop-No", sh.creds.ShopNo).must(t, 400, 400)
	wrong := shop{m: sh.m, creds: &merchant.Credentials{ShopNo: sh.creds.ShopNo, PublicKey: "pk_wrong"}}
	c.call(&wrong, "GET", "/shop/account", "").must(t, 401, 401)
	c.call(&wrong, "GET", "/shop/card/bin/list", "").must(t, 401, 401)
	disabled := s.newShop(merchant.Spec{})
	if err := s.l.SetMerchantStatus(ctx, disabled.m.ID, merchant.Disabled); err != nil {
		t.Fatal(err)
	}
	c.call(&disabled, "POST", "/shop/card/create", `{"bin":"453201","currency":"USD","amount":1}`).must(t, 403, 403)
	fenced := s.newShop(merchant.Spec{IPWhitelist: []string{"192.0.2.0/24"}})
	c.call(&fenced, "GET", "/shop/account", "", "X-Forwarded-For", "192.0.2.7").must(t, 403, 403)

	// Create: success (with a callback URL and an Idempotency-Key, then its
	// retry), a zero-amount EUR card, and the failures.
	create := `{"bin":"453201","currency":"USD","amount":"50.00","remark":"contract test","callback_url":"https://merchant.example.com/cards"}`
	var usd cardOut
	c.call(&sh, "POST", "/shop/card/create", create, "Idempotency-Key", "oa-create-1").must(t, 200, 200).into(t, &usd)
	c.call(&sh, "POST", "/shop/card/create", create, "Idempotency-Key", "oa-create-1").must(t, 200, 200)
	c.call(&sh, "POST", "/shop/card/create", `{"bin":"453201","currency":"USD","amount":1}`, "Idempotency-Key", "oa-create-1").must(t, 200, codeIdemConflict)
	var eur cardOut
	c.call(&sh, "POST", "/shop/card/create", `{"bin":"453202","currency":"EUR","amount":0}`).must(t, 200, 200).into(t, &eur)
	c.call(&sh, "POST", "/shop/card/create", `{"bin":"453201","currency":"USD","amount":"1000.01"}`).must(t, 200, codeInsufficient)
	c.call(&sh, "POST", "/shop/card/create", `{"bin":"453201","currency":"GBP","amount":1}`).must(t, 200, codeCurrencyDenied)
	c.call(&sh, "POST", "/shop/card/create", `{"bin":"999999","currency":"USD","amount":1}`).must(t, 200, codeBINDenied)
	c.call(&sh, "POST", "/shop/card/create", `{"bin":"453201","currency":"USD","amount":1.001}`).must(t, 400, 400)
	c.call(&sh, "POST", "/shop/card/create", `{"bin":"453201","currency":"USD","amount":1,"pan":"4111"}`).must(t, 400, 400)
	c.call(&sh, "POST", "/shop/card/create", `{"bin":"453201","currency":"USD","amount":1}`, "Idempotency-Key", "").must(t, 400, 400)
	c.call(&sh, "POST", "/shop/card/create", `{"remark":"`+strings.Repeat("x", 70<<10)+`"}`).must(t, 413, 413)

	// Info and balance: success, unknown card, another merchant's card, a
	// missing or malformed cardNo.
	c.call(&sh, "GET", "/shop/card/info?cardNo="+usd.CardNo, "").must(t, 200, 200)
	c.call(&sh, "GET", "/shop/card/info?cardNo=crd_nosuchcard", "").must(t, 200, codeCardNotFound)
	c.call(&other, "GET", "/shop/card/info?cardNo="+usd.CardNo, "").must(t, 200, codeCardNotFound)
	c.call(&sh, "GET", "/shop/card/info", "").must(t, 400, 400)
	c.call(&sh, "GET", "/shop/card/balance?cardNo="+eur.CardNo, "").must(t, 200, 200)
	c.call(&other, "GET", "/shop/card/balance?cardNo="+eur.CardNo, "").must(t, 200, codeCardNotFound)
	c.call(&sh, "GET", "/shop/card/balance?cardNo=a%20b", "").must(t, 400, 400)

	// Batch: found, unknown and duplicate items; 101 entries.
	batch := fmt.Sprintf(`{"cardNos":[%q,"crd_nosuchcard",%q,%q]}`, usd.CardNo, eur.CardNo, usd.CardNo)
	var items struct {
		List []struct {
			Found bool `json:"found"`
		} `json:"list"`
	}
	c.call(&sh, "POST", "/shop/card/balance/batch", batch).must(t, 200, 200).into(t, &items)
	if len(items.List) != 4 || items.List[1].Found {
		t.Errorf("batch: %+v", items.List)
	}
	c.call(&sh, "POST", "/shop/card/balance/batch", batch, "Idempotency-Key", "oa-batch").must(t, 200, 200)
	c.call(&sh, "POST", "/shop/card/balance/batch", `{"cardNos":[`+strings.TrimSuffix(strings.Repeat(`"crd_x",`, 101), ",")+`]}`).must(t, 400, 400)

	// Transfers: same currency both ways, across currencies both ways, and
	// the failures.
	transfer := func(cardNo, amount, cur, dir string) string {
		return fmt.Sprintf(`{"cardNo":%q,"amount":%s,"currency":%q,"direction":%q}`, cardNo, amount, cur, dir)
	}
	var tr transferOut
	c.call(&sh, "POST", "/shop/card/transfer", transfer(usd.CardNo, `"25.00"`, "USD", "IN"), "Idempotency-Key", "oa-in").must(t, 200, 200).into(t, &tr)
	if tr.FXRate != nil {
		t.Errorf("same-currency transfer with an FX rate: %+v", tr)
	}
	c.call(&sh, "POST", "/shop/card/transfer", transfer(usd.CardNo, `10`, "USD", "OUT")).must(t, 200, 200)
	c.call(&sh, "POST", "/shop/card/transfer", transfer(eur.CardNo, `33.33`, "USD", "IN")).must(t, 200, 200).into(t, &tr)
	if tr.FXRate == nil || tr.MidRate == nil || tr.SpreadBps == nil {
		t.Errorf("cross-currency transfer without its rate: %+v", tr)
	}
	c.call(&sh, "POST", "/shop/card/transfer", transfer(eur.CardNo, `"5.00"`, "USD", "OUT")).must(t, 200, 200)
	c.call(&sh, "POST", "/shop/card/transfer", transfer(usd.CardNo, `"5000.00"`, "USD", "IN")).must(t, 200, codeInsufficient)
	c.call(&sh, "POST", "/shop/card/transfer", transfer(usd.CardNo, `1`, "GBP", "IN")).must(t, 200, codeCurrencyDenied)
	c.call(&other, "POST", "/shop/card/transfer", transfer(usd.CardNo, `1`, "USD", "OUT")).must(t, 200, codeCardNotFound)
	c.call(&sh, "POST", "/shop/card/transfer", transfer(usd.CardNo, `1`, "USD", "SIDEWAYS")).must(t, 400, 400)
	c.call(&sh, "POST", "/shop/card/transfer", `{"cardNo":"`+usd.CardNo+`"}`).must(t, 400, 400)

	// Freeze, a refused transfer IN, OUT still allowed, unfreeze, cancel.
	c.call(&sh, "POST", "/shop/card/freeze", `{"cardNo":"`+usd.CardNo+`","reason":"contract test"}`).must(t, 200, 200)
	c.call(&sh, "POST", "/shop/card/freeze", `{"cardNo":"`+usd.CardNo+`"}`, "Idempotency-Key", "oa-freeze").must(t, 200, 200)
	c.call(&sh, "POST", "/shop/card/freeze", `{"cardNo":"crd_nosuchcard"}`).must(t, 200, codeCardNotFound)
	c.call(&sh, "POST", "/shop/card/freeze", `{"cardNo":1}`).must(t, 400, 400)
	c.call(&sh, "POST", "/shop/card/transfer", transfer(usd.CardNo, `1`, "USD", "IN")).must(t, 200, codeCardFrozen)
	c.call(&sh, "POST", "/shop/card/transfer", transfer(usd.CardNo, `1`, "USD", "OUT")).must(t, 200, 200)
	c.call(&sh, "POST", "/shop/card/unfreeze", `{"cardNo":"`+usd.CardNo+`"}`, "Idempotency-Key", "oa-unfreeze").must(t, 200, 200)
	c.call(&sh, "POST", "/shop/card/unfreeze", `{"cardNo":"`+usd.CardNo+`","reason":"no"}`).must(t, 400, 400)
	c.call(&other, "POST", "/shop/card/unfreeze", `{"cardNo":"`+usd.CardNo+`"}`).must(t, 200, codeCardNotFound)
	c.call(&sh, "POST", "/shop/card/cancel", `{"cardNo":"`+usd.CardNo+`"}`, "Idempotency-Key", "oa-cancel").must(t, 200, 200)
	c.call(&sh, "POST", "/shop/card/cancel", `{"cardNo":"`+usd.CardNo+`"}`).must(t, 200, codeCardCancelled)
	c.call(&sh, "POST", "/shop/card/cancel", ``).must(t, 400, 400)
	c.call(&sh, "POST", "/shop/card/unfreeze", `{"cardNo":"`+usd.CardNo+`"}`).must(t, 200, codeCardCancelled)
	c.call(&sh, "POST", "/shop/card/transfer", transfer(usd.CardNo, `1`, "USD", "OUT")).must(t, 200, codeCardCancelled)
	var after cardOut
	c.call(&sh, "GET", "/shop/card/info?cardNo="+usd.CardNo, "").must(t, 200, 200).into(t, &after)
	if after.Status != cards.CardCancelled {
		t.Errorf("after cancel: %+v", after)
	}
	c.call(&sh, "POST", "/shop/card/balance/batch", `{"cardNos":["`+usd.CardNo+`"]}`).must(t, 200, 200)

	// Outside the operations: 404 and 405 in the envelope.
	c.call(&sh, "GET", "/shop/nothing", "").must(t, 404, 404)
	c.call(nil, "GET", "/", "").must(t, 404, 404)
	c.call(&sh, "GET", "/shop/card/create", "").must(t, 405, 405)
	c.call(&sh, "DELETE", "/shop/card/info", "").must(t, 405, 405)

	// Remittances: the corridor, creation (settled, returned) and the
	// failures, the query before and after the worker moved them.
	c.call(&sh, "GET", "/shop/remittance/dynamic-fields?country=DE&currency=EUR", "").must(t, 200, 200)
	c.call(&sh, "GET", "/shop/remittance/dynamic-fields?country=US&currency=USD", "").must(t, 200, 200)
	c.call(&sh, "GET", "/shop/remittance/dynamic-fields?country=ZZ&currency=EUR", "").must(t, 400, 400)
	c.call(&sh, "GET", "/shop/remittance/dynamic-fields?country=DE", "").must(t, 400, 400)
	var sepa, ach remitOut
	c.call(&sh, "POST", "/shop/remittance/create", remitBody(benDE, `"100.00"`, "EUR", `,"purpose":"SUPP"`),
		"Idempotency-Key", "oa-remit").must(t, 200, 200).into(t, &sepa)
	c.call(&sh, "POST", "/shop/remittance/create", remitBody(benDE, `"100.00"`, "EUR", `,"purpose":"SUPP"`),
		"Idempotency-Key", "oa-remit").must(t, 200, 200)
	benUSReturned := strings.Replace(benUS, `"123456789"`, `"9876540000"`, 1)
	c.call(&sh, "POST", "/shop/remittance/create", remitBody(benUSReturned, `25`, "USD", "")).must(t, 200, 200).into(t, &ach)
	c.call(&sh, "POST", "/shop/remittance/create", remitBody(benDE, `"900000.00"`, "EUR", "")).must(t, 200, codeLimitExceeded)
	c.call(&sh, "POST", "/shop/remittance/create", remitBody(benDE, `"2000.00"`, "EUR", "")).must(t, 200, codeInsufficient)
	c.call(&sh, "POST", "/shop/remittance/create", remitBody(`{"name":"Jane Doe","country":"GB","account_no":"GB29NWBK60161331926819"}`, `1`, "GBP", "")).must(t, 200, codeCurrencyDenied)
	c.call(&sh, "POST", "/shop/remittance/create", remitBody(strings.Replace(benDE, `}`, `,"ifsc":"HDFC0001234"}`, 1), `1`, "EUR", "")).must(t, 400, 400)
	c.call(&sh, "POST", "/shop/remittance/create", `{"payer_id":"payer-1"}`).must(t, 400, 400)
	c.call(&sh, "GET", "/shop/remittance/query?txId="+sepa.TxID, "").must(t, 200, 200)
	c.call(&other, "GET", "/shop/remittance/query?txId="+sepa.TxID, "").must(t, 200, codeRemitNotFound)
	c.call(&sh, "GET", "/shop/remittance/query", "").must(t, 400, 400)
	s.settle(s.remitWorker())
	for tx, want := range map[string]string{sepa.TxID: remittance.RemitSettled, ach.TxID: remittance.RemitReturned} {
		var r remitOut
		c.call(&sh, "GET", "/shop/remittance/query?txId="+tx, "").must(t, 200, 200).into(t, &r)
		if r.Status != want {
			t.Errorf("remittance %s is %s, want %s", tx, r.Status, want)
		}
	}

	// The bill, as JSON pages and as CSV, and its 400s.
	today := time.Now().UTC()
	days := "startDate=" + today.AddDate(0, 0, -1).Format(time.DateOnly) + "&endDate=" + today.AddDate(0, 0, 1).Format(time.DateOnly)
	var page struct {
		Total int               `json:"total"`
		List  []json.RawMessage `json:"list"`
	}
	c.call(&sh, "GET", "/shop/bill/list?"+days+"&page=1&size=500", "").must(t, 200, 200).into(t, &page)
	if page.Total == 0 || len(page.List) != page.Total {
		t.Errorf("bill: total %d, %d lines", page.Total, len(page.List))
	}
	c.call(&sh, "GET", "/shop/bill/list?"+days, "").must(t, 200, 200)
	c.call(&sh, "GET", "/shop/bill/list?"+days+"&page=2&size=500", "").must(t, 200, 200)
	status, _, csvBody := c.callRaw(&sh, "/shop/bill/list?"+days+"&page=1&size=500", "Accept", "text/csv")
	if status != 200 {
		t.Fatalf("CSV bill: HTTP %d %s", status, csvBody)
	}
	checkBillCSV(t, c.doc, csvBody, page.List)
	c.callRaw(&sh, "/shop/bill/list?"+days, "Accept", "text/csv")
	c.call(&sh, "GET", "/shop/bill/list?startDate=2026-03-02&endDate=2026-03-01", "").must(t, 400, 400)
	c.call(&sh, "GET", "/shop/bill/list?"+days+"&size=501", "").must(t, 400, 400)
	c.call(&sh, "GET", "/shop/bill/list?startDate=01/03/2026&endDate=2026-03-01", "").must(t, 400, 400)

	// The bill's filters (issue 21): kinds repeated and comma-separated, a
	// card, a currency, as JSON and CSV, and their 400s; the card list and
	// its 400s; the API version header, named and refused.
	c.call(&sh, "GET", "/shop/bill/list?"+days+"&type=CARD_FUND,CARD_TRANSFER_IN&type=DEPOSIT&currency=USD", "").must(t, 200, 200)
	c.call(&sh, "GET", "/shop/bill/list?"+days+"&cardNo="+eur.CardNo+"&page=1&size=10", "", "X-Api-Version", "2026-11-23").must(t, 200, 200)
	c.callRaw(&sh, "/shop/bill/list?"+days+"&type=DEPOSIT", "Accept", "text/csv")
	c.call(&sh, "GET", "/shop/bill/list?"+days+"&type=NOPE", "").must(t, 400, 400)
	c.call(&sh, "GET", "/shop/bill/list?"+days+"&currency=ZZZ", "").must(t, 400, 400)
	var cardPage struct {
		Total int               `json:"total"`
		List  []json.RawMessage `json:"list"`
	}
	c.call(&sh, "GET", "/shop/card/list", "").must(t, 200, 200).into(t, &cardPage)
	if cardPage.Total != 2 || len(cardPage.List) != 2 {
		t.Errorf("card list: total %d, %d cards", cardPage.Total, len(cardPage.List))
	}
	c.call(&sh, "GET", "/shop/card/list?page=1&size=1&status=CANCELLED&currency=USD&createdFrom=2026-01-01&createdTo=2099-12-31", "",
		"X-Api-Version", "2026-11-23").must(t, 200, 200)
	c.call(&sh, "GET", "/shop/card/list?status=GONE", "").must(t, 400, 400)
	c.call(&sh, "GET", "/shop/card/list", "", "X-Api-Version", "1999-01-01").must(t, 400, 400)
	c.call(&wrong, "GET", "/shop/card/list", "").must(t, 401, 401)
	contractWebhooksAndKeys(t, c, s, sh, other)
	contractReports(t, c, sh)

	c.driveSandbox(sh)
	c.checkCoverage()

	// The card network's messages, for their callbacks: an approval, a
	// decline, a clearing, a reversal and a refund on the EUR card.
	auth := func(id string, minor int64) *network.AuthResult {
		r, err := s.l.Network.Authorize(ctx, network.AuthRequest{MessageID: id, CardNo: eur.CardNo, Amount: minor, Currency: "EUR",
			MerchantName: "Contract Coffee", MCC: "5814", MerchantCountry: "DE"})
		if err != nil {
			t.Fatalf("Authorize %s: %v", id, err)
		}
		return r
	}
	if a := auth("oa-auth-1", 1000); !a.Approved {
		t.Fatalf("authorization declined: %+v", a)
	} else if _, err := s.l.Network.Clear(ctx, network.ClearRequest{MessageID: "oa-clear-1", AuthID: a.AuthID, Amount: 800}); err != nil {
		t.Fatal(err)
	}
	if a := auth("oa-auth-2", 500); !a.Approved {
		t.Fatalf("authorization declined: %+v", a)
	} else if _, err := s.l.Network.Reverse(ctx, network.ReverseRequest{MessageID: "oa-reverse-1", AuthID: a.AuthID}); err != nil {
		t.Fatal(err)
	}
	if a := auth("oa-auth-3", 99_999_00); a.Approved {
		t.Fatalf("authorization approved: %+v", a)
	}
	if _, err := s.l.Network.Refund(ctx, network.RefundRequest{MessageID: "oa-refund-1", CardNo: eur.CardNo, Amount: 100, Currency: "EUR"}); err != nil {
		t.Fatal(err)
	}
	checkCallbacks(t, s, c.doc, []string{cards.EventCardCreated, cards.EventCardFrozen, cards.EventCardUnfrozen,
		cards.EventCardCancelled, remittance.EventRemittanceStatus, network.EventAuthApproved, network.EventAuthDeclined,
		network.EventAuthCleared, network.EventAuthReversed, network.EventCardRefund})
}

// checkCallbacks validates the body of every callback the tests recorded
// against the document's webhook, and wants one of each kind listed.
func checkCallbacks(t *testing.T, s *testServer, doc *openapi3.T, want []string) {
	t.Helper()
	ctx := context.Background()
	hook := doc.Webhooks["callback"]
	if hook == nil || hook.Post == nil || hook.Post.RequestBody == nil {
		t.Fatal("the document has no webhooks/callback POST with a body")
	}
	schema := hook.Post.RequestBody.Value.Content.Get("application/json").Schema.Value
	seen := map[string]bool{}
	deliveries := s.l.Deliveries
	for range 100 {
		// Deliveries of one card come one at a time, in order: acknowledge
		// each to reach the next.
		ds, err := deliveries.ClaimDeliveries(ctx, 100, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if len(ds) == 0 {
			break
		}
		for i := range ds {
			d := &ds[i]
			var v any
			if err := json.Unmarshal(d.Body, &v); err != nil {
				t.Fatalf("callback %s: %v", d.EventID, err)
			}
			if err := schema.VisitJSON(v, openapi3.EnableJSONSchema2020(), openapi3.MultiErrors()); err != nil {
				t.Errorf("callback %s does not match webhooks/callback: %v\n%s", d.EventType, err, d.Body)
			}
			seen[d.EventType] = true
			if err := deliveries.RecordDelivery(ctx, d, delivery.DeliveryOutcome{OK: true, Status: 200}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, typ := range want {
		if !seen[typ] {
			t.Errorf("no %s callback was checked", typ)
		}
	}
}

// checkBillCSV checks the CSV bill against the document: the header line
// its text/csv schema gives, and each line, read back as the JSON object
// its cells are, a BillLine equal to the JSON page's line.
func checkBillCSV(t *testing.T, doc *openapi3.T, body []byte, jsonLines []json.RawMessage) {
	t.Helper()
	lineSchema := doc.Components.Schemas["BillLine"].Value
	records, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
	if err != nil {
		t.Fatalf("CSV bill: %v\n%s", err, body)
	}
	if len(records)-1 != len(jsonLines) {
		t.Fatalf("CSV bill has %d lines, the JSON page %d", len(records)-1, len(jsonLines))
	}
	header := records[0]
	numeric := map[string]bool{"amount": true, "balanceAfter": true, "seq": true, "billSeq": true, "relatedTo": true}
	optional := map[string]bool{"cardNo": true, "txId": true, "authId": true, "relatedTo": true}
	for i, rec := range records[1:] {
		var b strings.Builder
		b.WriteString("{")
		first := true
		for j, name := range header {
			cell := rec[j]
			if optional[name] && cell == "" {
				continue
			}
			if !first {
				b.WriteString(",")
			}
			first = false
			key, _ := json.Marshal(name)
			b.Write(key)
			b.WriteString(":")
			if numeric[name] {
				b.WriteString(cell)
			} else {
				v, _ := json.Marshal(cell)
				b.Write(v)
			}
		}
		b.WriteString("}")
		var fromCSV, fromJSON any
		if err := json.Unmarshal([]byte(b.String()), &fromCSV); err != nil {
			t.Fatalf("CSV line %d: %v: %s", i+1, err, b.String())
		}
		if err := lineSchema.VisitJSON(fromCSV, openapi3.EnableJSONSchema2020(), openapi3.VisitAsResponse(), openapi3.MultiErrors()); err != nil {
			t.Errorf("CSV line %d is not a BillLine: %v", i+1, err)
		}
		if err := json.Unmarshal(jsonLines[i], &fromJSON); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(fromCSV, fromJSON) {
			t.Errorf("CSV line %d %s differs from the JSON line %s", i+1, b.String(), jsonLines[i])
		}
	}
}

// A merchant past its rate limit is answered 429 as documented.
func TestOpenAPIRateLimited(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, serverOptions{rateLimit: RateLimit{RPS: 0.001, Burst: 1}})
	c := newContract(t, s)
	sh := s.fundedShop()
	c.call(&sh, "GET", "/shop/card/bin/list", "").must(t, 200, 200)
	a := c.call(&sh, "GET", "/shop/card/bin/list", "").must(t, 429, 429)
	if a.header.Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
	c.call(&sh, "POST", "/shop/card/create", `{"bin":"453201","currency":"USD","amount":1}`).must(t, 429, 429)
}

// A request past its 60-second deadline answers 503 as documented.
func TestOpenAPIUnavailable(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, serverOptions{timeout: time.Nanosecond})
	c := newContract(t, s)
	sh := s.fundedShop()
	c.call(&sh, "GET", "/shop/account", "").must(t, 503, 503)
	c.call(&sh, "POST", "/shop/card/transfer", `{"cardNo":"crd_x","amount":1,"currency":"USD","direction":"IN"}`).must(t, 503, 503)
}

// The transport's failures match the document: a 431 on every kind of
// operation (answered by the server), and the 408 and the plain-HTTP 400
// pinned by their golden files against their components.
func TestOpenAPITransportFailures(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, serverOptions{})
	c := newContract(t, s)
	sh := s.fundedShop()
	pad := strings.Repeat("p", httplimits.HeaderBytesMaxDefault)
	c.call(&sh, "GET", "/shop/account", "", "X-Pad", pad).must(t, 431, 431)
	c.call(&sh, "POST", "/shop/card/create", `{"bin":"453201","currency":"USD","amount":1}`, "X-Pad", pad).must(t, 431, 431)
	for golden, component := range map[string]string{
		"408_body_stalled": "RequestTimeout", "431_headers_too_large": "HeadersTooLarge", "400_plain_http": "BadRequest",
	} {
		raw, err := os.ReadFile(filepath.Join("testdata", golden+".golden"))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.checkComponent(component, http.Header{"Content-Type": {"application/json; charset=utf-8"}}, raw); err != nil {
			t.Errorf("%s against %s: %v", raw, component, err)
		}
	}
}

// The 500 no endpoint gives on purpose: the panic answer pinned by its
// golden file matches the document's InternalError.
func TestOpenAPIInternalError(t *testing.T) {
	t.Parallel()
	c := &contract{t: t, doc: loadOpenAPI(t)}
	raw, err := os.ReadFile(filepath.Join("testdata", "500_panic.golden"))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.checkComponent("InternalError", http.Header{"Content-Type": {"application/json; charset=utf-8"}}, raw); err != nil {
		t.Errorf("%s: %v", raw, err)
	}
}

// The checker itself: answers that drift from the document are caught.
func TestOpenAPICheckerCatchesDrift(t *testing.T) {
	t.Parallel()
	c := &contract{t: t, doc: loadOpenAPI(t), answers: map[string]map[string]bool{}}
	card := `"cardNo":"crd_k3v9x2m7q1w8z4c6b0n5","last4":"4242","status":"ACTIVE","balance":50.00,"held":0.00,"receivable":0.00,"currency":"USD",` +
		`"createdAt":"2026-03-01T10:00:00Z","bin":"453201","cardNetwork":"VISA","expiry":"03/29","panRef":"pan_k3v9x2m7q1w8z4c6b0n5","remark":""`
	hdr := http.Header{"Content-Type": {"application/json; charset=utf-8"}, "X-Request-Id": {"req_1"}}
	get := func() *http.Request {
		r, _ := http.NewRequest("GET", "https://gateway.test/shop/card/info?cardNo=crd_k3v9x2m7q1w8z4c6b0n5", http.NoBody)
		r.Header.Set("X-Shop-No", "SH1")
		r.Header.Set("X-Public-Key", "pk_1")
		return r
	}
	if err := c.check(get(), nil, 200, hdr, []byte(`{"code":200,"message":"success","data":{`+card+`}}`)); err != nil {
		t.Fatalf("a good answer is refused: %v", err)
	}
	drifts := map[string]struct {
		status int
		body   string
	}{
		"undeclared field":         {200, `{"code":200,"message":"success","data":{` + card + `,"pan":"4532011234567890"}}`},
		"missing field":            {200, `{"code":200,"message":"success","data":{` + strings.Replace(card, `"last4":"4242",`, "", 1) + `}}`},
		"amount as a string":       {200, `{"code":200,"message":"success","data":{` + strings.Replace(card, `"balance":50.00`, `"balance":"50.00"`, 1) + `}}`},
		"unknown status":           {200, `{"code":200,"message":"success","data":{` + strings.Replace(card, `"ACTIVE"`, `"BLOCKED"`, 1) + `}}`},
		"failure with data":        {200, `{"code":1002,"message":"card not found","data":{}}`},
		"unknown business code":    {200, `{"code":1050,"message":"?","data":null}`},
		"undeclared HTTP status":   {418, `{"code":418,"message":"teapot","data":null}`},
		"401 with another message": {401, `{"code":401,"message":"no such shop","data":null}`},
		"no envelope":              {400, `{"error":"bad"}`},
	}
	for name, d := range drifts {
		if err := c.check(get(), nil, d.status, hdr, []byte(d.body)); err == nil {
			t.Errorf("%s: not caught", name)
		}
	}
	if err := c.check(get(), nil, 200, http.Header{"Content-Type": {"application/json"}}, []byte(`{"code":200,"message":"success","data":{`+card+`}}`)); err == nil {
		t.Error("a missing X-Request-Id is not caught")
	}
	// A callback whose data is not the one of its event type.
	hook := c.doc.Webhooks["callback"].Post.RequestBody.Value.Content.Get("application/json").Schema.Value
	event := func(typ, data string) error {
		var v any
		if err := json.Unmarshal([]byte(`{"event_id":"evt_7w2k9d4m1q8z3x6c5v0b2n7r","event_type":"`+typ+
			`","created_at":"2025-01-15T09:30:00Z","shopNo":"SH1","sequence":1,"data":`+data+`}`), &v); err != nil {
			t.Fatal(err)
		}
		return hook.VisitJSON(v, openapi3.EnableJSONSchema2020())
	}
	cardData := `{"cardNo":"crd_1","last4":"4242","status":"ACTIVE","currency":"USD","balance":1.00,"held":0.00,"createdAt":"2025-01-15T09:30:00Z"}`
	if err := event("card.created", cardData); err != nil {
		t.Errorf("a good card.created callback is refused: %v", err)
	}
	if event("remittance.status", cardData) == nil {
		t.Error("a remittance.status callback with a card's data is not caught")
	}
	if event("card.created", strings.Replace(cardData, `"last4":"4242",`, "", 1)) == nil {
		t.Error("a card.created callback without last4 is not caught")
	}
}

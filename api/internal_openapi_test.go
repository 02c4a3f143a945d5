package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
	"github.com/gin-gonic/gin"
)

// The contract of the internal API: every answer the network tests get
// through netServer.icall is checked against docs/openapi-internal.yaml —
// the status is one the operation declares, the body matches its schema
// (no field the schema does not list), X-Request-Id is there — and every
// request the server accepts must be one the document accepts too.

var internalOpenAPIPath = filepath.Join("..", "docs", "openapi-internal.yaml")

var (
	internalDocOnce sync.Once
	internalDoc     *openapi3.T
	internalRouter  routers.Router
	internalDocErr  error
)

func loadInternalOpenAPI() (*openapi3.T, routers.Router, error) {
	internalDocOnce.Do(func() {
		loader := openapi3.NewLoader()
		internalDoc, internalDocErr = loader.LoadFromFile(internalOpenAPIPath)
		if internalDocErr == nil {
			internalDocErr = internalDoc.Validate(loader.Context)
		}
		if internalDocErr == nil {
			internalRouter, internalDocErr = legacy.NewRouter(internalDoc)
		}
	})
	if internalDocErr != nil {
		return nil, nil, fmt.Errorf("%s: %w", internalOpenAPIPath, internalDocErr)
	}
	return internalDoc, internalRouter, nil
}

// checkInternalAnswer validates one exchange with the internal API against
// the document; it returns the first disagreement.
func checkInternalAnswer(method, path, body string, header http.Header, a *answer) error {
	doc, router, err := loadInternalOpenAPI()
	if err != nil {
		return err
	}
	ctx := context.Background()
	if a.header.Get("X-Request-Id") == "" {
		return fmt.Errorf("no X-Request-Id header")
	}
	// The document's server, so that the router matches.
	req, err := http.NewRequest(method, doc.Servers[0].URL+path, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header = header.Clone()
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	route, params, err := router.FindRoute(req)
	if err != nil {
		// Not an operation of the document: the 404 or 405 that
		// components/schemas/HTTPFailure describes.
		message := "no such endpoint"
		if a.status == http.StatusMethodNotAllowed {
			message = "method " + method + " not allowed on this endpoint"
		}
		if a.status != http.StatusNotFound && a.status != http.StatusMethodNotAllowed {
			return fmt.Errorf("%s %s is not an operation of the document (%v), yet answered HTTP %d", method, path, err, a.status)
		}
		var v any
		if err := json.Unmarshal(a.raw, &v); err != nil {
			return err
		}
		if err := doc.Components.Schemas["HTTPFailure"].Value.VisitJSON(v,
			openapi3.EnableJSONSchema2020(), openapi3.VisitAsResponse(), openapi3.MultiErrors()); err != nil {
			return err
		}
		if a.Code != a.status || a.Message != message {
			return fmt.Errorf("HTTP %d answered %s, want code %d and message %q", a.status, a.raw, a.status, message)
		}
		return nil
	}
	in := &openapi3filter.RequestValidationInput{
		Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{MultiError: true, AuthenticationFunc: bearerPresent},
	}
	if a.status == http.StatusOK && a.Code == codeOK {
		if err := openapi3filter.ValidateRequest(ctx, in); err != nil {
			return fmt.Errorf("the server accepted a request the document refuses: %w", err)
		}
	}
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in, Status: a.status, Header: a.header,
		Options: &openapi3filter.Options{MultiError: true, IncludeResponseStatus: true},
	}
	out.SetBodyBytes(a.raw)
	return openapi3filter.ValidateResponse(ctx, out)
}

// bearerPresent is the document's security for request validation: the
// header is there (the server decides whether the token is right).
func bearerPresent(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	if !strings.HasPrefix(strings.ToLower(in.RequestValidationInput.Request.Header.Get("Authorization")), "bearer ") {
		return fmt.Errorf("no bearer token")
	}
	return nil
}

// icall sends a request to the internal API with the given headers (name,
// value pairs) and checks the answer against the document.
func (n *netServer) icall(method, path, body string, headers ...string) *answer {
	n.t.Helper()
	a := n.internal.request(nil, method, path, body, headers...)
	h := http.Header{}
	for i := 0; i+1 < len(headers); i += 2 {
		h[headers[i]] = append(h[headers[i]], headers[i+1])
	}
	if err := checkInternalAnswer(method, path, body, h, a); err != nil {
		n.t.Errorf("%s %s → HTTP %d: the answer does not match %s: %v\nbody: %s", method, path, a.status, internalOpenAPIPath, err, a.raw)
	}
	return a
}

// The routes of the server and the operations of the document are the
// same set.
func TestInternalOpenAPIRoutes(t *testing.T) {
	t.Parallel()
	doc, _, err := loadInternalOpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	engine := NewInternalServer(PartnerDeps{Token: testInternalToken}).(*gin.Engine)
	var routes, ops []string
	for _, r := range engine.Routes() {
		p := r.Path
		for _, seg := range strings.Split(p, "/") {
			if strings.HasPrefix(seg, ":") {
				p = strings.Replace(p, seg, "{"+seg[1:]+"}", 1)
			}
		}
		routes = append(routes, r.Method+" "+p)
	}
	for _, p := range doc.Paths.InMatchingOrder() {
		for m := range doc.Paths.Value(p).Operations() {
			ops = append(ops, m+" "+p)
		}
	}
	sort.Strings(routes)
	sort.Strings(ops)
	if strings.Join(routes, "\n") != strings.Join(ops, "\n") {
		t.Errorf("server routes:\n%s\n\ndocument operations:\n%s", strings.Join(routes, "\n"), strings.Join(ops, "\n"))
	}
}

// A body over the limit is the document's 413.
func TestInternalBodyLimit(t *testing.T) {
	t.Parallel()
	n := newNetServer(t)
	big := `{"messageId":"m1","cardNo":"` + strings.Repeat("x", 70<<10) + `"}`
	n.icall("POST", "/network/authorize", big, "Authorization", "Bearer "+testInternalToken).must(t, 413, 413)
}

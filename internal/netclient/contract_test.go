package netclient

import (
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/paygate/gateway/internal/contracttest"
)

// The contract: this client against docs/openapi-internal.yaml, both ways,
// as api/client's is against docs/openapi.yaml.

var specPath = filepath.Join("..", "..", "docs", "openapi-internal.yaml")

var decimalType = reflect.TypeOf(Decimal{})

type contractOp struct {
	op      operation
	method  string
	request reflect.Type
	data    reflect.Type // nil: not an envelope (healthz)
	query   []string
}

var contractOps = []contractOp{
	{op: opHealthz, method: "Healthz"},
	{op: opAuthorize, method: "Authorize", request: reflect.TypeOf(AuthorizeRequest{}), data: reflect.TypeOf(Decision{})},
	{op: opClear, method: "Clear", request: reflect.TypeOf(ClearRequest{}), data: reflect.TypeOf(HoldResult{})},
	{op: opReverse, method: "Reverse", request: reflect.TypeOf(ReverseRequest{}), data: reflect.TypeOf(HoldResult{})},
	{op: opRefund, method: "Refund", request: reflect.TypeOf(RefundRequest{}), data: reflect.TypeOf(Refund{})},
	{op: opAttempts, method: "Attempts", data: reflect.TypeOf(struct {
		List []AuthorizationAttempt `json:"list"`
	}{}), query: []string{"cardNo", "limit"}},
	{op: opAuthorization, method: "Authorization", data: reflect.TypeOf(Authorization{})},
	{op: opRailReport, method: "RailReport", request: reflect.TypeOf(RailReportRequest{}), data: reflect.TypeOf(RailReport{})},
}

func TestContract(t *testing.T) {
	doc := contracttest.Load(t, specPath)
	byID := map[string]contractOp{}
	for _, c := range contractOps {
		byID[c.op.id] = c
	}
	if len(byID) != len(operationsTable) {
		t.Errorf("%d operations in the test's table, %d in the client's", len(byID), len(operationsTable))
	}
	typ := reflect.TypeOf(&Client{})
	seen := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method, o := range item.Operations() {
			seen[o.OperationID] = true
			c, ok := byID[o.OperationID]
			if !ok {
				t.Errorf("%s %s (%s): no method of the client calls it", method, path, o.OperationID)
				continue
			}
			if c.op.method != method || c.op.path != path {
				t.Errorf("%s: the client calls %s %s, the spec says %s %s", o.OperationID, c.op.method, c.op.path, method, path)
			}
			if _, ok := typ.MethodByName(c.method); !ok {
				t.Errorf("%s: Client has no method %s", o.OperationID, c.method)
			}
			var q []string
			for _, p := range o.Parameters {
				if p.Value != nil && p.Value.In == "query" {
					q = append(q, p.Value.Name)
				}
			}
			sort.Strings(q)
			if strings.Join(q, ",") != strings.Join(c.query, ",") {
				t.Errorf("%s: query parameters %v in the spec, %v in the client", o.OperationID, q, c.query)
			}
			var body *openapi3.Schema
			if o.RequestBody != nil && o.RequestBody.Value != nil {
				if mt := o.RequestBody.Value.Content.Get("application/json"); mt != nil {
					body = mt.Schema.Value
				}
			}
			if (body != nil) != (c.request != nil) {
				t.Errorf("%s: a body in the spec: %v, in the client: %v", o.OperationID, body != nil, c.request)
			} else if body != nil {
				for _, p := range contracttest.Compare(o.OperationID+" request", body, c.request, contracttest.Options{Decimal: decimalType, Request: true}) {
					t.Error(p)
				}
			}
			if c.data == nil {
				continue
			}
			data := successData(o)
			if data == nil {
				t.Errorf("%s: no success envelope in the spec", o.OperationID)
				continue
			}
			for _, p := range contracttest.Compare(o.OperationID+" data", data, c.data, contracttest.Options{Decimal: decimalType}) {
				t.Error(p)
			}
		}
	}
	for id := range byID {
		if !seen[id] {
			t.Errorf("the client calls %s, which is not in the spec", id)
		}
	}
}

func successData(o *openapi3.Operation) *openapi3.Schema {
	r := o.Responses.Value("200")
	if r == nil || r.Value == nil {
		return nil
	}
	mt := r.Value.Content.Get("application/json")
	if mt == nil || mt.Schema == nil || mt.Schema.Value == nil {
		return nil
	}
	for _, b := range mt.Schema.Value.OneOf {
		if b.Value == nil {
			continue
		}
		if code := b.Value.Properties["code"]; code != nil && code.Value != nil && code.Value.Const != nil {
			if d := b.Value.Properties["data"]; d != nil {
				return d.Value
			}
		}
	}
	return nil
}

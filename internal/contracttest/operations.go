package contracttest

import (
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// Op is what a client has for one operation of a document.
type Op struct {
	ID, Method, Path string
	// Methods are the client's methods that call it.
	Methods []string
	// Request is the body's Go type; nil without a body.
	Request reflect.Type
	// Data is the Go type of the success envelope's data; nil when the
	// spec's data is null. NoEnvelope: the answer is not an envelope
	// (/healthz), Data is not compared.
	Data       reflect.Type
	NoEnvelope bool
	// Query are the query parameters the client sends.
	Query []string
}

// QueryTags are the `query` tags of a struct's fields.
func QueryTags(typ reflect.Type) []string {
	var out []string
	for i := 0; i < typ.NumField(); i++ {
		if q := typ.Field(i).Tag.Get("query"); q != "" {
			out = append(out, q)
		}
	}
	return out
}

// CheckOperations holds a client to a document: every operation of the
// document is one of ops with the same method and path, its methods exist
// on clientType, and its query parameters, body and data match; and every
// op is in the document.
func CheckOperations(t *testing.T, doc *openapi3.T, ops []Op, clientType reflect.Type, o Options) {
	t.Helper()
	byID := map[string]Op{}
	for _, op := range ops {
		byID[op.ID] = op
	}
	seen := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method, spec := range item.Operations() {
			seen[spec.OperationID] = true
			op, ok := byID[spec.OperationID]
			if !ok && o.NotClient[spec.OperationID] != "" {
				continue
			}
			if !ok {
				t.Errorf("%s %s (%s): no method of the client calls it", method, path, spec.OperationID)
				continue
			}
			if op.Method != method || op.Path != path {
				t.Errorf("%s: the client calls %s %s, the spec says %s %s", op.ID, op.Method, op.Path, method, path)
			}
			for _, m := range op.Methods {
				if _, ok := clientType.MethodByName(m); !ok {
					t.Errorf("%s: %s has no method %s", op.ID, clientType, m)
				}
			}
			checkQuery(t, spec, op)
			checkBody(t, spec, op, o)
			if !op.NoEnvelope {
				checkData(t, spec, op, o)
			}
		}
	}
	for id := range byID {
		if !seen[id] {
			t.Errorf("the client calls %s, which is not in the spec", id)
		}
	}
}

func checkQuery(t *testing.T, spec *openapi3.Operation, op Op) {
	t.Helper()
	var want []string
	for _, p := range spec.Parameters {
		if p.Value != nil && p.Value.In == "query" {
			want = append(want, p.Value.Name)
		}
	}
	got := append([]string(nil), op.Query...)
	sort.Strings(want)
	sort.Strings(got)
	if strings.Join(want, ",") != strings.Join(got, ",") {
		t.Errorf("%s: query parameters %v in the spec, %v in the client", op.ID, want, got)
	}
}

func checkBody(t *testing.T, spec *openapi3.Operation, op Op, o Options) {
	t.Helper()
	var s *openapi3.Schema
	if spec.RequestBody != nil && spec.RequestBody.Value != nil {
		if mt := spec.RequestBody.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil {
			s = mt.Schema.Value
		}
	}
	switch {
	case s == nil && op.Request == nil:
	case s == nil || op.Request == nil:
		t.Errorf("%s: a request body in the spec: %v; in the client: %v", op.ID, s != nil, op.Request)
	default:
		o.Request = true
		for _, p := range Compare(op.ID+" request", s, op.Request, o) {
			t.Error(p)
		}
	}
}

// successData is the schema of data in the success branch of the 200
// answer: the oneOf branch whose code is a constant (200).
func successData(spec *openapi3.Operation) (*openapi3.Schema, bool) {
	r := spec.Responses.Value("200")
	if r == nil || r.Value == nil {
		return nil, false
	}
	mt := r.Value.Content.Get("application/json")
	if mt == nil || mt.Schema == nil || mt.Schema.Value == nil {
		return nil, false
	}
	// The success envelope alone (an operation without business failures),
	// or one branch of a oneOf.
	branches := append(openapi3.SchemaRefs{mt.Schema}, mt.Schema.Value.OneOf...)
	for _, b := range branches {
		if b.Value == nil {
			continue
		}
		if code := b.Value.Properties["code"]; code != nil && code.Value != nil && code.Value.Const != nil {
			if d := b.Value.Properties["data"]; d != nil {
				return d.Value, true
			}
		}
	}
	return nil, false
}

func checkData(t *testing.T, spec *openapi3.Operation, op Op, o Options) {
	t.Helper()
	s, ok := successData(spec)
	switch {
	case !ok:
		t.Errorf("%s: the spec has no success envelope", op.ID)
	case s.Type != nil && s.Type.Is("null"):
		if op.Data != nil {
			t.Errorf("%s: data is null in the spec, %s in the client", op.ID, op.Data)
		}
	case op.Data == nil:
		t.Errorf("%s: the spec answers data, the client decodes none", op.ID)
	default:
		o.Request = false
		for _, p := range Compare(op.ID+" data", s, op.Data, o) {
			t.Error(p)
		}
	}
}

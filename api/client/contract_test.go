package client

import (
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/paygate/gateway/internal/contracttest"
)

// The contract: this package's types and methods against docs/openapi.yaml.
// A /shop operation without a method, a field on one side only, a number
// that is not a Decimal, a nullable field that cannot be nil: each fails
// here, so the client cannot drift from the document (the end-to-end test
// then checks the same types against the real server).

var specPath = filepath.Join("..", "..", "docs", "openapi.yaml")

var decimalType = reflect.TypeOf(Decimal{})

// contractOp is what the client has for one operation of the spec.
type contractOp struct {
	op      operation
	methods []string     // the Client methods that call it
	request reflect.Type // the body; nil without one
	data    reflect.Type // the data of a success; nil for data null
	query   reflect.Type // a struct with `query` tags; nil: queryArgs
	args    []string     // query parameters passed as method arguments
}

var contractOps = []contractOp{
	{op: opGetAccount, methods: []string{"Account"}, data: reflect.TypeOf(Account{})},
	{op: opListBINs, methods: []string{"BINs"}, data: reflect.TypeOf([]BINEntry{})},
	{op: opCreateCard, methods: []string{"CreateCard"}, request: reflect.TypeOf(CreateCardRequest{}), data: reflect.TypeOf(Card{})},
	{op: opGetCard, methods: []string{"Card"}, data: reflect.TypeOf(Card{}), args: []string{"cardNo"}},
	{op: opGetCardBalance, methods: []string{"CardBalance"}, data: reflect.TypeOf(CardBalance{}), args: []string{"cardNo"}},
	{op: opGetCardBalances, methods: []string{"CardBalances"}, request: reflect.TypeOf(cardBalanceBatchRequest{}), data: reflect.TypeOf(cardBalanceBatch{})},
	{op: opFreezeCard, methods: []string{"FreezeCard"}, request: reflect.TypeOf(FreezeCardRequest{})},
	{op: opUnfreezeCard, methods: []string{"UnfreezeCard"}, request: reflect.TypeOf(cardNoRequest{})},
	{op: opCancelCard, methods: []string{"CancelCard"}, request: reflect.TypeOf(cardNoRequest{})},
	{op: opTransferCard, methods: []string{"Transfer"}, request: reflect.TypeOf(TransferRequest{}), data: reflect.TypeOf(Transfer{})},
	{op: opRemittanceFields, methods: []string{"RemittanceFields"}, data: reflect.TypeOf(Corridor{}), args: []string{"country", "currency"}},
	{op: opCreateRemittance, methods: []string{"CreateRemittance"}, request: reflect.TypeOf(CreateRemittanceRequest{}), data: reflect.TypeOf(RemittanceCreated{})},
	{op: opGetRemittance, methods: []string{"Remittance"}, data: reflect.TypeOf(Remittance{}), args: []string{"txId"}},
	{op: opListBill, methods: []string{"Bill", "BillCSV"}, data: reflect.TypeOf(BillPage{}), query: reflect.TypeOf(BillQuery{})},
}

// TestContractOperations: every operation of the spec has its methods, its
// method and path, its query parameters, its body and its data.
func TestContractOperations(t *testing.T) {
	doc := contracttest.Load(t, specPath)
	byID := map[string]contractOp{}
	for _, c := range contractOps {
		byID[c.op.id] = c
	}
	if len(byID) != len(shopOperationsTable) {
		t.Errorf("%d operations in the test's table, %d in the client's", len(byID), len(shopOperationsTable))
	}
	for _, op := range shopOperationsTable {
		if byID[op.id].op != op {
			t.Errorf("operation %s of the client is not in the test's table as %+v", op.id, op)
		}
	}
	seen := map[string]bool{}
	clientType := reflect.TypeOf(&Client{})
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
			for _, m := range c.methods {
				if _, ok := clientType.MethodByName(m); !ok {
					t.Errorf("%s: Client has no method %s", o.OperationID, m)
				}
			}
			checkQuery(t, o, c)
			checkBody(t, o, c)
			checkData(t, o, c)
		}
	}
	for id := range byID {
		if !seen[id] {
			t.Errorf("the client calls %s, which is not in the spec", id)
		}
	}
}

func checkQuery(t *testing.T, o *openapi3.Operation, c contractOp) {
	t.Helper()
	var spec, ours []string
	for _, p := range o.Parameters {
		if p.Value != nil && p.Value.In == "query" {
			spec = append(spec, p.Value.Name)
		}
	}
	ours = append(ours, c.args...)
	if c.query != nil {
		for i := 0; i < c.query.NumField(); i++ {
			if q := c.query.Field(i).Tag.Get("query"); q != "" {
				ours = append(ours, q)
			}
		}
	}
	sort.Strings(spec)
	sort.Strings(ours)
	if strings.Join(spec, ",") != strings.Join(ours, ",") {
		t.Errorf("%s: query parameters %v in the spec, %v in the client", o.OperationID, spec, ours)
	}
}

func checkBody(t *testing.T, o *openapi3.Operation, c contractOp) {
	t.Helper()
	var s *openapi3.Schema
	if o.RequestBody != nil && o.RequestBody.Value != nil {
		if mt := o.RequestBody.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil {
			s = mt.Schema.Value
		}
	}
	switch {
	case s == nil && c.request == nil:
	case s == nil || c.request == nil:
		t.Errorf("%s: a request body in the spec: %v; in the client: %v", o.OperationID, s != nil, c.request)
	default:
		for _, p := range contracttest.Compare(o.OperationID+" request", s, c.request, contracttest.Options{Decimal: decimalType, Request: true}) {
			t.Error(p)
		}
	}
}

// successData is the schema of data in the success branch of the 200
// answer: the oneOf branch that is an envelope with code 200.
func successData(o *openapi3.Operation) (data *openapi3.Schema, found bool) {
	r := o.Responses.Value("200")
	if r == nil || r.Value == nil {
		return nil, false
	}
	mt := r.Value.Content.Get("application/json")
	if mt == nil || mt.Schema == nil || mt.Schema.Value == nil {
		return nil, false
	}
	for _, b := range mt.Schema.Value.OneOf {
		if b.Value == nil {
			continue
		}
		code := b.Value.Properties["code"]
		if code == nil || code.Value == nil || code.Value.Const == nil {
			continue
		}
		if d := b.Value.Properties["data"]; d != nil {
			return d.Value, true
		}
	}
	return nil, false
}

func checkData(t *testing.T, o *openapi3.Operation, c contractOp) {
	t.Helper()
	s, ok := successData(o)
	if !ok {
		t.Errorf("%s: the spec has no success envelope", o.OperationID)
		return
	}
	if s.Type != nil && s.Type.Is("null") {
		if c.data != nil {
			t.Errorf("%s: data is null in the spec, %s in the client", o.OperationID, c.data)
		}
		return
	}
	if c.data == nil {
		t.Errorf("%s: the spec answers data, the client decodes none", o.OperationID)
		return
	}
	for _, p := range contracttest.Compare(o.OperationID+" data", s, c.data, contracttest.Options{Decimal: decimalType}) {
		t.Error(p)
	}
}

// componentTypes are the Go types of the spec's object schemas. Envelopes
// and failures are the Caller's (it decodes {code, message, data} itself).
var componentTypes = map[string]reflect.Type{
	"Account": reflect.TypeOf(Account{}), "FundingBalance": reflect.TypeOf(FundingBalance{}), "Limit": reflect.TypeOf(Limit{}),
	"BINEntry": reflect.TypeOf(BINEntry{}), "CardCreateRequest": reflect.TypeOf(CreateCardRequest{}), "Card": reflect.TypeOf(Card{}),
	"CardBalance": reflect.TypeOf(CardBalance{}), "CardBalanceBatchRequest": reflect.TypeOf(cardBalanceBatchRequest{}),
	"CardBalanceBatch": reflect.TypeOf(cardBalanceBatch{}), "CardBalanceFound": reflect.TypeOf(CardBalanceItem{}),
	"CardBalanceNotFound": reflect.TypeOf(CardBalanceItem{}), "CardNoRequest": reflect.TypeOf(cardNoRequest{}),
	"CardFreezeRequest": reflect.TypeOf(FreezeCardRequest{}), "TransferRequest": reflect.TypeOf(TransferRequest{}),
	"Transfer": reflect.TypeOf(Transfer{}), "Corridor": reflect.TypeOf(Corridor{}), "CorridorField": reflect.TypeOf(CorridorField{}),
	"PurposeCode": reflect.TypeOf(PurposeCode{}), "RemittanceCreateRequest": reflect.TypeOf(CreateRemittanceRequest{}),
	"Beneficiary": reflect.TypeOf(Beneficiary{}), "RemittanceCreated": reflect.TypeOf(RemittanceCreated{}),
	"Remittance": reflect.TypeOf(Remittance{}), "RemittanceStep": reflect.TypeOf(RemittanceStep{}), "BillPage": reflect.TypeOf(BillPage{}),
	"BillLine": reflect.TypeOf(BillLine{}), "CardEventData": reflect.TypeOf(CardEventData{}),
	"RemittanceEventData": reflect.TypeOf(RemittanceEventData{}), "AuthorizationEventData": reflect.TypeOf(AuthorizationEventData{}),
	"HoldEventData": reflect.TypeOf(HoldEventData{}), "RefundEventData": reflect.TypeOf(RefundEventData{}),
	"CallbackEvent": reflect.TypeOf(CallbackEvent{}),
}

// requestComponents are sent, not received.
var requestComponents = map[string]bool{"CardCreateRequest": true, "CardBalanceBatchRequest": true, "CardNoRequest": true,
	"CardFreezeRequest": true, "TransferRequest": true, "RemittanceCreateRequest": true, "Beneficiary": true}

// TestContractComponents: every object schema of the spec has a Go type of
// the same fields (the partial ones inside unions included), and the
// other way round.
func TestContractComponents(t *testing.T) {
	doc := contracttest.Load(t, specPath)
	for name, ref := range doc.Components.Schemas {
		s := ref.Value
		isObject := s.Type != nil && s.Type.Is("object") || len(s.Properties) > 0
		if !isObject || strings.HasSuffix(name, "Envelope") || name == "BusinessFailure" || name == "HTTPFailure" {
			continue
		}
		typ, ok := componentTypes[name]
		if !ok {
			t.Errorf("schema %s has no Go type in the client", name)
			continue
		}
		if name == "CallbackEvent" {
			// The event's envelope is the receiver's; its data is decoded by
			// DecodeEventData into the *EventData types checked here too.
			s = &openapi3.Schema{Type: s.Type, Properties: s.Properties, Required: s.Required}
		}
		if name == "CardBalanceFound" || name == "CardBalanceNotFound" {
			// One Go type for both branches of the batch's items: compare it
			// with their union (CardBalanceBatch does, through its list).
			continue
		}
		for _, p := range contracttest.Compare(name, s, typ, contracttest.Options{Decimal: decimalType, Request: requestComponents[name]}) {
			t.Error(p)
		}
	}
	for name := range componentTypes {
		if doc.Components.Schemas[name] == nil {
			t.Errorf("the client has a type for schema %s, which the spec lacks", name)
		}
	}
}

//go:build contract

package client

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
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

var (
	specPath    = filepath.Join("..", "..", "docs", "openapi.yaml")
	specOptions = contracttest.Options{Decimal: reflect.TypeOf(Decimal{})}
)

// contractOps is what the client has for each operation of the spec.
func contractOps() []contracttest.Op {
	op := func(o operation, methods []string, request, data reflect.Type, query ...string) contracttest.Op {
		return contracttest.Op{ID: o.id, Method: o.method, Path: o.path, Methods: methods, Request: request, Data: data, Query: query}
	}
	t := reflect.TypeOf
	return []contracttest.Op{
		op(opGetAccount, []string{"Account"}, nil, t(Account{})),
		op(opListBINs, []string{"BINs"}, nil, t([]BINEntry{})),
		op(opCreateCard, []string{"CreateCard"}, t(CreateCardRequest{}), t(Card{})),
		op(opGetCard, []string{"Card"}, nil, t(Card{}), "cardNo"),
		op(opGetCardBalance, []string{"CardBalance"}, nil, t(CardBalance{}), "cardNo"),
		op(opGetCardBalances, []string{"CardBalances"}, t(cardBalanceBatchRequest{}), t(cardBalanceBatch{})),
		op(opFreezeCard, []string{"FreezeCard"}, t(FreezeCardRequest{}), nil),
		op(opUnfreezeCard, []string{"UnfreezeCard"}, t(cardNoRequest{}), nil),
		op(opCancelCard, []string{"CancelCard"}, t(cardNoRequest{}), nil),
		op(opTransferCard, []string{"Transfer"}, t(TransferRequest{}), t(Transfer{})),
		op(opRemittanceFields, []string{"RemittanceFields"}, nil, t(Corridor{}), "country", "currency"),
		op(opCreateRemittance, []string{"CreateRemittance"}, t(CreateRemittanceRequest{}), t(RemittanceCreated{})),
		op(opGetRemittance, []string{"Remittance"}, nil, t(Remittance{}), "txId"),
		op(opListBill, []string{"Bill", "BillCSV"}, nil, t(BillPage{}), contracttest.QueryTags(t(BillQuery{}))...),
		op(opListCards, []string{"ListCards"}, nil, t(CardPage{}), contracttest.QueryTags(t(CardListQuery{}))...),
		op(opGetBalanceReport, []string{"BalanceReport", "BalanceReportCSV"}, nil, t(BalanceReport{}), contracttest.QueryTags(t(ReportQuery{}))...),
		op(opGetBalanceReportTotals, []string{"BalanceReportTotals", "BalanceReportTotalsCSV"}, nil, t(BalanceReportTotals{}), contracttest.QueryTags(t(ReportQuery{}))...),
		op(opGetWebhook, []string{"Webhook"}, nil, t(Webhook{})),
		op(opSetWebhook, []string{"SetWebhook"}, t(webhookRequest{}), t(Webhook{})),
		op(opListWebhookEvents, []string{"WebhookEvents"}, nil, t(WebhookEventPage{}), contracttest.QueryTags(t(WebhookEventsQuery{}))...),
		op(opReplayWebhookEvent, []string{"ReplayWebhookEvent"}, t(replayEventRequest{}), t(WebhookEvent{})),
		op(opReplayFailedWebhookEvents, []string{"ReplayFailedWebhookEvents"}, t(ReplayFailedRequest{}), t(ReplayFailedResult{})),
		op(opGetWebhookEvent, []string{"WebhookEvent"}, nil, t(WebhookEventDetail{})),
		op(opRollWebhookSecret, []string{"RollWebhookSecret"}, t(KeyRollRequest{}), t(WebhookSecret{})),
		op(opGetKeys, []string{"Keys"}, nil, t(Keys{})),
		op(opRollPublicKey, []string{"RollPublicKey"}, t(KeyRollRequest{}), t(KeyRoll{})),
		op(opRollSigningKey, []string{"RollSigningKey"}, t(KeyRollRequest{}), t(KeyRoll{})),
		// The sandbox (sandbox.go).
		op(opSandboxAuthorize, []string{"SandboxAuthorize"}, t(SandboxAuthorizeRequest{}), t(SandboxAuthorization{})),
		op(opSandboxCapture, []string{"SandboxCapture"}, t(SandboxCaptureRequest{}), t(SandboxHold{})),
		op(opSandboxReverse, []string{"SandboxReverse"}, t(SandboxReverseRequest{}), t(SandboxHold{})),
		op(opSandboxRefund, []string{"SandboxRefund"}, t(SandboxRefundRequest{}), t(SandboxRefund{})),
		op(opSandboxSettle, []string{"SandboxSettleRemittance"}, t(SandboxSettleRequest{}), t(SandboxRemittanceReport{})),
		op(opSandboxReturn, []string{"SandboxReturnRemittance"}, t(SandboxReturnRequest{}), t(SandboxRemittanceReport{})),
		op(opSandboxClock, []string{"SandboxClock"}, nil, t(SandboxClock{})),
		op(opSandboxAdvanceClock, []string{"SandboxAdvanceClock"}, t(SandboxClockAdvanceRequest{}), t(SandboxClock{})),
		op(opListWebhookEndpoints, []string{"WebhookEndpoints"}, nil, t(webhookEndpointList{})),
		op(opCreateWebhookEndpoint, []string{"CreateWebhookEndpoint"}, t(WebhookEndpointRequest{}), t(WebhookEndpoint{})),
		op(opGetWebhookEndpoint, []string{"WebhookEndpoint"}, nil, t(WebhookEndpoint{})),
		op(opUpdateWebhookEndpoint, []string{"UpdateWebhookEndpoint"}, t(WebhookEndpointRequest{}), t(WebhookEndpoint{})),
		op(opDeleteWebhookEndpoint, []string{"DeleteWebhookEndpoint"}, nil, t(WebhookEndpointDeleted{})),
		op(opRollWebhookEndpointSecr, []string{"RollWebhookEndpointSecret"}, t(KeyRollRequest{}), t(WebhookSecret{})),
	}
}

// TestContractOperations: every operation of the spec has its methods, its
// method and path, its query parameters, its body and its data; and the
// client calls nothing else.
func TestContractOperations(t *testing.T) {
	ops := contractOps()
	if len(ops) != len(shopOperationsTable) {
		t.Errorf("%d operations in the test's table, %d in the client's", len(ops), len(shopOperationsTable))
	}
	contracttest.CheckOperations(t, contracttest.Load(t, specPath), ops, reflect.TypeOf(&Client{}), specOptions)
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
	"CallbackEvent":  reflect.TypeOf(CallbackEvent{}),
	"WebhookRequest": reflect.TypeOf(webhookRequest{}), "Webhook": reflect.TypeOf(Webhook{}),
	"WebhookEvent": reflect.TypeOf(WebhookEvent{}), "ReplayEventRequest": reflect.TypeOf(replayEventRequest{}),
	"ReplayFailedRequest": reflect.TypeOf(ReplayFailedRequest{}), "KeyRollRequest": reflect.TypeOf(KeyRollRequest{}),
	"KeyRoll": reflect.TypeOf(KeyRoll{}), "KeyState": reflect.TypeOf(KeyState{}),
	"CardPage":      reflect.TypeOf(CardPage{}),
	"BalanceReport": reflect.TypeOf(BalanceReport{}), "BalanceReportTotals": reflect.TypeOf(BalanceReportTotals{}),
	"BalanceReportTotal": reflect.TypeOf(BalanceReportTotal{}), "BalanceReportCurrency": reflect.TypeOf(BalanceReportCurrency{}),
	"BalanceReportRow": reflect.TypeOf(BalanceReportRow{}), "ReportFigures": reflect.TypeOf(ReportFigures{}),
	"ReportActivity": reflect.TypeOf(ReportActivity{}), "WebhookEventDetail": reflect.TypeOf(WebhookEventDetail{}),
	"WebhookDelivery": reflect.TypeOf(WebhookDelivery{}), "WebhookDeliverySummary": reflect.TypeOf(WebhookDeliverySummary{}),
	"WebhookAttempt": reflect.TypeOf(WebhookAttempt{}),
	// The sandbox.
	"SandboxAuthorizeRequest": reflect.TypeOf(SandboxAuthorizeRequest{}), "SandboxAuthorization": reflect.TypeOf(SandboxAuthorization{}),
	"SandboxCaptureRequest": reflect.TypeOf(SandboxCaptureRequest{}), "SandboxReverseRequest": reflect.TypeOf(SandboxReverseRequest{}),
	"SandboxHold": reflect.TypeOf(SandboxHold{}), "SandboxRefundRequest": reflect.TypeOf(SandboxRefundRequest{}),
	"SandboxRefund": reflect.TypeOf(SandboxRefund{}), "SandboxSettleRequest": reflect.TypeOf(SandboxSettleRequest{}),
	"SandboxReturnRequest": reflect.TypeOf(SandboxReturnRequest{}), "SandboxRemittanceReport": reflect.TypeOf(SandboxRemittanceReport{}),
	"SandboxClock": reflect.TypeOf(SandboxClock{}), "SandboxClockAdvanceRequest": reflect.TypeOf(SandboxClockAdvanceRequest{}),
	// Webhook endpoints.
	"WebhookEndpoint": reflect.TypeOf(WebhookEndpoint{}), "WebhookEndpointRequest": reflect.TypeOf(WebhookEndpointRequest{}),
}

// requestComponents are sent, not received.
var requestComponents = map[string]bool{"CardCreateRequest": true, "CardBalanceBatchRequest": true, "CardNoRequest": true,
	"CardFreezeRequest": true, "TransferRequest": true, "RemittanceCreateRequest": true, "Beneficiary": true,
	"WebhookRequest": true, "ReplayEventRequest": true, "ReplayFailedRequest": true, "KeyRollRequest": true,
	"SandboxAuthorizeRequest": true, "SandboxCaptureRequest": true, "SandboxReverseRequest": true, "SandboxRefundRequest": true,
	"SandboxSettleRequest": true, "SandboxReturnRequest": true, "WebhookEndpointRequest": true, "SandboxClockAdvanceRequest": true}

// TestContractComponents: every object schema of the spec has a Go type of
// the same fields (the callbacks' data included), and the other way round.
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
		switch name {
		case "CallbackEvent":
			// The event's envelope is the receiver's, its data left raw for
			// DecodeEventData, whose *EventData types are checked here too.
			s = &openapi3.Schema{Type: s.Type, Properties: s.Properties, Required: s.Required}
		case "CardBalanceFound", "CardBalanceNotFound":
			// One Go type for both branches of the batch's items: it is
			// compared with their union through CardBalanceBatch.
			continue
		}
		o := specOptions
		o.Request = requestComponents[name]
		for _, p := range contracttest.Compare(name, s, typ, o) {
			t.Error(p)
		}
	}
	for name := range componentTypes {
		if doc.Components.Schemas[name] == nil {
			t.Errorf("the client has a type for schema %s, which the spec lacks", name)
		}
	}
}

// TestEveryDocumentedCodeIsAConstant: each code of docs/errors.md's
// business table has its Code constant (CodeEventNotFound was documented
// on a method before it existed).
func TestEveryDocumentedCodeIsAConstant(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "errors.md"))
	if err != nil {
		t.Fatal(err)
	}
	have := map[int]bool{}
	for _, c := range []Code{CodeOK, CodeFailure, CodeInsufficientFunds, CodeCardNotFound, CodeCardFrozen, CodeCardCancelled,
		CodeCurrencyNotAllowed, CodeBINNotOpen, CodeLimitExceeded, CodeIdempotencyConflict, CodeInProgress, CodeFXUnavailable,
		CodeRemittanceNotFound, CodeAuthorizationNotFound, CodeAuthorizationClosed, CodeEventNotFound, CodeWebhookEndpointNotFound} {
		have[int(c)] = true
	}
	row := regexp.MustCompile("(?m)^\\| (\\d{3,4}) \\| (`|any)")
	found := 0
	for _, m := range row.FindAllStringSubmatch(string(raw), -1) {
		n, _ := strconv.Atoi(m[1])
		found++
		if !have[n] {
			t.Errorf("docs/errors.md documents code %d; the client has no constant for it", n)
		}
	}
	if found < 10 {
		t.Fatalf("read %d business codes from docs/errors.md: the table's shape changed", found)
	}
}

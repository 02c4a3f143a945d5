package netclient

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/paygate/gateway/internal/contracttest"
)

// The contract: this client against docs/openapi-internal.yaml, both ways,
// as api/client's is against docs/openapi.yaml.
func TestContract(t *testing.T) {
	op := func(o operation, method string, request, data reflect.Type, query ...string) contracttest.Op {
		return contracttest.Op{ID: o.id, Method: o.method, Path: o.path, Methods: []string{method}, Request: request, Data: data, Query: query}
	}
	ty := reflect.TypeOf
	healthz := op(opHealthz, "Healthz", nil, nil)
	healthz.NoEnvelope = true
	ops := []contracttest.Op{
		healthz,
		op(opAuthorize, "Authorize", ty(AuthorizeRequest{}), ty(Decision{})),
		op(opClear, "Clear", ty(ClearRequest{}), ty(HoldResult{})),
		op(opReverse, "Reverse", ty(ReverseRequest{}), ty(HoldResult{})),
		op(opRefund, "Refund", ty(RefundRequest{}), ty(Refund{})),
		op(opAttempts, "Attempts", nil, ty(attemptList{}), "cardNo", "limit"),
		op(opAuthorization, "Authorization", nil, ty(Authorization{})),
		op(opRailReport, "RailReport", ty(RailReportRequest{}), ty(RailReport{})),
	}
	if len(ops) != len(operationsTable) {
		t.Errorf("%d operations in the test's table, %d in the client's", len(ops), len(operationsTable))
	}
	doc := contracttest.Load(t, filepath.Join("..", "..", "docs", "openapi-internal.yaml"))
	contracttest.CheckOperations(t, doc, ops, reflect.TypeOf(&Client{}), contracttest.Options{Decimal: reflect.TypeOf(Decimal{}),
		NotClient: map[string]string{"internalMetrics": "Prometheus scrapes it; no partner calls it"}})
}

package client

// Operation is one /shop operation this client calls: its operationId in
// docs/openapi.yaml, its HTTP method and its path ({…} for a path
// parameter).
type Operation struct {
	ID, Method, Path string
}

// Operations lists every /shop operation this client calls, in a stable
// order: for an allow list in front of the gateway, or a check that a
// client version covers an API version. The contract test holds it equal
// to the document's operations.
func Operations() []Operation {
	out := make([]Operation, len(shopOperationsTable))
	for i, op := range shopOperationsTable {
		out[i] = Operation{ID: op.id, Method: op.method, Path: op.path}
	}
	return out
}

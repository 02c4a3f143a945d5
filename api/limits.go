package api

import "github.com/paygate/gateway/internal/httplimits"

// Limits bound what one request and one client may hold of the gateway
// (docs/security.md, "Time-outs" and "Connections per client"). The type,
// its defaults and its checks are internal/httplimits', below both this
// package and the configuration, so that reading a setting does not link
// the HTTP server; the API enforces them.
type Limits = httplimits.Limits

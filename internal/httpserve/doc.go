// Package httpserve is the HTTP plumbing under the gateway's listeners that
// is not the /shop contract: the http.Server with the request's phases
// (NewHTTPServer), the listener chain (the per-client bound of connections,
// plain HTTP answered in the envelope, TLS: WrapListener), TLS settings,
// request ids, the deadlines of a body's reads, the size of a request's
// headers, the rate limiter's buckets, liveness and readiness, and the
// process's Prometheus registry. api (/shop and the internal API) and the
// console's listener build on it; it knows no merchant, no route and no
// envelope code (docs/architecture.md).
package httpserve

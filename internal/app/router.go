package app

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/api"
	"github.com/paygate/gateway/api/partner"
	"github.com/paygate/gateway/internal/cells"
	"github.com/paygate/gateway/internal/httpserve"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/internal/testclock"
	"github.com/paygate/gateway/internal/workers"
)

// shopHandler is the /shop API of one cell's services.
func (a *App) shopHandler(s *Services, metrics *httpserve.Metrics) http.Handler {
	cfg, l := a.cfg, s.Ledger
	return api.NewServer(api.Deps{Log: a.log, DB: l.DB(), Ready: a.ready, Merchants: s.Merchants, Accounts: s.Cards, Cards: s.Cards,
		ReadKeys: l, Bills: s.Bills, Remittances: s.Remit, Stats: l,
		WebhookSettings: s.Merchants, Webhooks: s.Deliveries, Keys: s.Merchants,
		Sandbox: partner.NewSandbox(partner.SandboxDeps{Cards: s.Cards, Network: s.Network, Rails: s.Remit, Remittances: s.Remit, ReadKeys: l,
			Clock: testclock.New(l, s.Network)}),
		TrustedProxies: cfg.Proxies, RateLimit: cfg.RateLimit, CallbackAllow: cfg.CallbackAllow, Limits: cfg.Limits, Metrics: metrics})
}

// routeShop is the public listener over cells (docs/scaling.md,
// "Routing"): a request carrying X-Shop-No goes to the cell the directory
// places the shop in; everything else — health, the documents, a shop the
// directory does not know — to the home cell, whose API answers an unknown
// shop exactly as one gateway does (the same 401, the same work).
func (a *App) routeShop(metrics *httpserve.Metrics) http.Handler {
	byCell := map[string]http.Handler{}
	for _, c := range a.cells {
		byCell[c.id.Name] = a.shopHandler(c.services, metrics)
	}
	home := byCell[a.cells[0].id.Name]
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		shop := r.Header.Get("X-Shop-No")
		// A value of no shop number's shape names no merchant: the home
		// cell answers it as one gateway does, and it never reaches the
		// directory's query or its cache (any header value used to cost
		// the home cell a query, before the rate limit).
		if !merchant.IsShopNo(shop) {
			home.ServeHTTP(w, r)
			return
		}
		e, found, err := a.directory.Lookup(r.Context(), shop)
		switch {
		case err != nil:
			a.log.Warn("directory lookup failed", "error", err.Error())
			unavailable(w, "the directory of merchants is unavailable; retry after the number of seconds in Retry-After")
		case !found || byCell[e.Cell] == nil:
			home.ServeHTTP(w, r)
		case e.State != cells.StateActive:
			unavailable(w, "the merchant is moving between cells; retry after the number of seconds in Retry-After")
		default:
			byCell[e.Cell].ServeHTTP(w, r)
		}
	})
}

// routeRetryAfterSeconds is the Retry-After of the router's own 503s: the
// directory's cache lifetime, after which a retry sees its change.
var routeRetryAfterSeconds = strconv.Itoa(int(cells.CacheTTL.Seconds()))

// unavailable answers 503 in the /shop envelope, with Retry-After: the
// request did nothing and may be repeated with its idempotency key.
func unavailable(w http.ResponseWriter, message string) {
	b, _ := json.Marshal(struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Data    any    `json:"data"`
	}{http.StatusServiceUnavailable, message, nil})
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Retry-After", routeRetryAfterSeconds)
	w.WriteHeader(http.StatusServiceUnavailable)
	_, _ = w.Write(append(b, '\n'))
}

// routedBodyBytesMax bounds what the internal router reads of a message to
// find its ids; a larger body goes to the home cell, whose API refuses it
// under its own limits as one gateway does.
const routedBodyBytesMax = 64 << 10

// routeInternal is the internal listener over cells: a network message
// goes to the cell its authorization id or card number carries
// (crd_<cell>…, auth_<cell>…), read from the path, the query or the JSON
// body, and a rail report to the cell its remittance id carries
// (rmt_<cell>…, the body's txId), unless that cell forwards the id (its
// merchant moved away: forwarder). An id of a merchant in a move's pause
// is not served: an authorization is declined 91, any other message
// answered 503 with Retry-After (held: the network repeats it). An id of
// no configured cell goes to the home cell, which answers it as an unknown
// card, authorization or remittance (docs/scaling.md, "Routing").
func (a *App) routeInternal(partnerOf func(*Services) http.Handler) http.Handler {
	byCell := map[string]http.Handler{}
	dbs := map[string]bun.IDB{}
	for _, c := range a.cells {
		byCell[c.id.Name] = partnerOf(c.services)
		dbs[c.id.Name] = c.store.DB
	}
	fwd := newForwarder(dbs)
	home := byCell[a.cells[0].id.Name]
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m := readMessage(r)
		if byCell[m.cell] == nil {
			home.ServeHTTP(w, r)
			return
		}
		cell, paused := fwd.resolve(r.Context(), m.cell, m.id)
		switch {
		case paused && m.authorize != nil:
			a.declinePaused(w, r, dbs[cell], byCell[cell], m.authorize)
		case paused:
			unavailable(w, "the card's merchant is moving between cells; retry after the number of seconds in Retry-After")
		case byCell[cell] != nil:
			byCell[cell].ServeHTTP(w, r)
		default:
			home.ServeHTTP(w, r)
		}
	})
}

// message is what the router reads of a network message: the cell its id
// names and the id, and an authorization's own fields (nil for any other
// message), for a decline the router answers itself.
type message struct {
	cell, id  string
	authorize *authorizeFields
}

type authorizeFields struct {
	MessageID string          `json:"messageId"`
	CardNo    string          `json:"cardNo"`
	Amount    json.RawMessage `json:"amount"`
	Currency  string          `json:"currency"`
}

// readMessage reads a network message's ids, or a rail report's
// remittance id (txId). It puts back the body it reads.
func readMessage(r *http.Request) message {
	rail := r.URL.Path == "/rail/report" && r.Method == http.MethodPost
	if !strings.HasPrefix(r.URL.Path, "/network/") && !rail {
		return message{}
	}
	if id, ok := strings.CutPrefix(r.URL.Path, "/network/authorizations/"); ok {
		return message{cell: idCell(id), id: id}
	}
	if r.Method == http.MethodGet {
		id := r.URL.Query().Get("cardNo")
		return message{cell: idCell(id), id: id}
	}
	if r.Body == nil {
		return message{}
	}
	body, ok := peekBody(r, routedBodyBytesMax)
	if !ok {
		return message{}
	}
	var ids struct {
		AuthID any `json:"authId"`
		CardNo any `json:"cardNo"`
		TxID   any `json:"txId"`
	}
	if json.Unmarshal(body, &ids) != nil {
		return message{}
	}
	// Each route by its own id only: a rail report by the remittance it
	// reports, a network message by its authorization or card.
	named := []any{ids.AuthID, ids.CardNo}
	if rail {
		named = []any{ids.TxID}
	}
	for _, v := range named {
		if s, ok := v.(string); ok && idCell(s) != "" {
			m := message{cell: idCell(s), id: s}
			var f authorizeFields
			if r.URL.Path == "/network/authorize" && json.Unmarshal(body, &f) == nil {
				m.authorize = &f
			}
			return m
		}
	}
	return message{}
}

// peekBody reads up to max bytes of r's body to route it, and puts them
// back: the handler reads the same bytes, then whatever was not read;
// false when the body is longer than limit or could not be read.
func peekBody(r *http.Request, limit int64) ([]byte, bool) {
	body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
	return body, err == nil && int64(len(body)) <= limit
}

func idCell(id string) string {
	if c, ok := cells.OfID(id); ok {
		return c
	}
	return ""
}

// Databases are the cells' databases, the home cell's first (one without
// GATEWAY_CELLS): for the checks serve makes of each.
func (a *App) Databases() []*bun.DB {
	out := make([]*bun.DB, len(a.cells))
	for i, c := range a.cells {
		out[i] = c.store.DB
	}
	return out
}

// allWorkerHealth is every cell's workers' health, each named after its
// cell when there are cells ("a1/hold-expiry").
func (a *App) allWorkerHealth() []workers.Health {
	var out []workers.Health
	for _, c := range a.cells {
		if c.workers == nil {
			continue
		}
		for _, h := range c.workers.Health() {
			if c.id.Name != "" {
				h.Name = c.id.Name + "/" + h.Name
			}
			out = append(out, h)
		}
	}
	return out
}

package database

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// A Watch probes every host of the gateway's DATABASE_URL on a connection of
// its own, once a WatchInterval, and acts on what it finds (docs/ha.md, "a
// silent primary"):
//
//   - a host that does not answer within the probe timeout (a frozen or
//     partitioned server: no RST, so TCP does not notice for minutes), or
//     that answers it is read-only (a demoted or fenced primary), has every
//     pool connection to it cut at once: the batches waiting on it fail
//     (503; an interrupted COMMIT is 503 outcome_unknown and resolves by its
//     Idempotency-Key) instead of waiting out their deadline, and nothing
//     idle to it is handed out again;
//   - a new connection tries the host last found writable first and skips
//     the hosts found silent (unless every host is), so that after a
//     promotion the first dial reaches the new primary, instead of spending
//     connect_timeout on a frozen node listed first;
//   - Writable (for /readyz) says whether a host was found writable by a
//     recent probe.
//
// A Watch is for serve's pool (DBOptions.Watch); the short-lived CLI
// commands do without.
type Watch struct {
	o     WatchOptions
	conns *connSet // the pool's connections

	mu         sync.Mutex
	hosts      []*watchedHost
	writer     int       // index in hosts of the host last found writable; -1: none yet
	writableAt time.Time // when a probe last found a writable host
	// changes counts the times the writable host became another one (a
	// failover or switchover), for gateway_database_failovers_total.
	changes int64

	stop chan struct{}
	done chan struct{}
}

// Defaults of WatchOptions.
const (
	WatchIntervalDefault     = time.Second
	WatchProbeTimeoutDefault = 3 * time.Second
)

// WatchOptions tune a Watch; zero fields take the defaults.
type WatchOptions struct {
	// Interval between two probes of a host.
	Interval time.Duration
	// ProbeTimeout: a host that does not answer a probe (connecting
	// included) within it is silent. Above the worst answer time of a
	// loaded server to a trivial query, or a busy machine cuts healthy
	// connections (each cut is a 503 its client retries).
	ProbeTimeout time.Duration
	// Log receives a line when a host changes state (nil: discarded).
	Log *slog.Logger
}

// NewWatch makes a Watch; OpenDB starts it (DBOptions.Watch) and Close
// stops it.
func NewWatch(o WatchOptions) *Watch {
	if o.Interval == 0 {
		o.Interval = WatchIntervalDefault
	}
	if o.ProbeTimeout == 0 {
		o.ProbeTimeout = WatchProbeTimeoutDefault
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return &Watch{o: o, writer: -1, stop: make(chan struct{}), done: make(chan struct{})}
}

// watchedHost is one host of the URL.
type watchedHost struct {
	name    string // host:port, as in the URL
	cfg     *pgconn.Config
	conn    *pgconn.PgConn // the probe's connection; nil: dial at the next probe
	addrMu  sync.Mutex
	addrs   map[string]bool // the addresses dialled for it (a name may resolve to several)
	silent  bool
	lastErr string
}

// hostKey names a fallback's host, as pgconn dials it.
func hostKey(host string, port uint16) string {
	_, addr := pgconn.NetworkAddress(host, port)
	return addr
}

// start probes the hosts of cfg (the pool's configuration) until Close.
func (w *Watch) start(cfg *pgx.ConnConfig, tcp TCPOptions, conns *connSet) {
	w.conns = conns
	for _, fbs := range hostGroups(cfg) {
		h := &watchedHost{name: fbs[0].Host + ":" + strconv.Itoa(int(fbs[0].Port)), addrs: map[string]bool{
			hostKey(fbs[0].Host, fbs[0].Port): true}}
		c := cfg.Config.Copy()
		c.Host, c.Port, c.TLSConfig, c.Fallbacks = fbs[0].Host, fbs[0].Port, fbs[0].TLSConfig, fbs[1:]
		c.ValidateConnect = nil // a standby is probed too
		c.AfterConnect = nil
		c.ConnectTimeout = w.o.ProbeTimeout
		c.OnPgError = nil
		c.RuntimeParams = map[string]string{"application_name": "gateway-watch"}
		dial := dialer(tcp, nil)
		c.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
			h.addrMu.Lock()
			h.addrs[addr] = true
			h.addrMu.Unlock()
			return dial(ctx, network, addr)
		}
		h.cfg = c
		w.hosts = append(w.hosts, h)
	}
	// The first verdict before the pool serves: readiness is right from
	// the start.
	w.probeAll()
	go w.loop()
}

// hostGroups are the fallbacks of cfg (its first host included), grouped by
// host and port in the URL's order: sslmode=prefer makes two of each.
func hostGroups(cfg *pgx.ConnConfig) [][]*pgconn.FallbackConfig {
	all := append([]*pgconn.FallbackConfig{{Host: cfg.Host, Port: cfg.Port, TLSConfig: cfg.TLSConfig}}, cfg.Fallbacks...)
	var groups [][]*pgconn.FallbackConfig
	index := map[string]int{}
	for _, fb := range all {
		k := hostKey(fb.Host, fb.Port)
		i, ok := index[k]
		if !ok {
			i = len(groups)
			index[k] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], fb)
	}
	return groups
}

// Close stops the Watch and closes its connections.
func (w *Watch) Close() {
	select {
	case <-w.stop:
		return
	default:
	}
	close(w.stop)
	if w.hosts != nil {
		<-w.done
	}
}

func (w *Watch) loop() {
	defer close(w.done)
	defer func() {
		for _, h := range w.hosts {
			if h.conn != nil {
				ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
				_ = h.conn.Close(ctx)
				cancel()
			}
		}
	}()
	t := time.NewTicker(w.o.Interval)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
		}
		w.probeAll()
	}
}

// probeAll probes every host at once: a silent host must not delay the
// verdict on the others.
func (w *Watch) probeAll() {
	var wg sync.WaitGroup
	writable := make([]bool, len(w.hosts))
	for i, h := range w.hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			writable[i] = w.probe(h)
		}()
	}
	wg.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, ok := range writable {
		if ok {
			if w.writer != i {
				w.o.Log.Info("database: writable host", "host", w.hosts[i].name)
				if w.writer >= 0 {
					w.changes++
				}
			}
			w.writer, w.writableAt = i, time.Now()
			return
		}
	}
}

// probeQuery is what makes a host writable for the gateway: out of recovery
// (a primary) and not read-only by default (not fenced, not being demoted).
const probeQuery = "select pg_is_in_recovery()::text, current_setting('default_transaction_read_only')"

// probe asks h whether it takes writes, dialling it first when needed. A
// host that does not answer is silent, one that answers read-only is not a
// writer: in both cases the pool's connections to it are cut.
func (w *Watch) probe(h *watchedHost) (writable bool) {
	ctx, cancel := context.WithTimeout(context.Background(), w.o.ProbeTimeout)
	defer cancel()
	var err error
	if h.conn == nil {
		h.conn, err = pgconn.ConnectConfig(ctx, h.cfg)
	}
	var rows [][][]byte
	if err == nil {
		var res []*pgconn.Result
		res, err = h.conn.Exec(ctx, probeQuery).ReadAll()
		if err == nil && (len(res) != 1 || len(res[0].Rows) != 1 || len(res[0].Rows[0]) != 2) {
			err = errors.New("unexpected probe answer")
		}
		if err == nil {
			rows = res[0].Rows
		}
	}
	var pe *pgconn.PgError
	switch {
	case err != nil && errors.As(err, &pe):
		// The server answered (too many connections, starting up…): it is
		// not silent; whether it takes writes is not known.
		w.closeProbe(h)
		w.mark(h, false, err.Error())
		return false
	case err != nil:
		w.closeProbe(h)
		w.mark(h, true, err.Error())
		w.cut(h, "silent")
		return false
	}
	w.mark(h, false, "")
	if string(rows[0][0]) != "false" || string(rows[0][1]) != "off" {
		w.cut(h, "read-only")
		return false
	}
	return true
}

func (w *Watch) closeProbe(h *watchedHost) {
	if h.conn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		_ = h.conn.Close(ctx) // closes the socket whatever the server does
		cancel()
		h.conn = nil
	}
}

func (w *Watch) mark(h *watchedHost, silent bool, why string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if silent != h.silent {
		if silent {
			w.o.Log.Warn("database: host silent; its connections are cut and new ones skip it", "host", h.name, "error", why)
		} else {
			w.o.Log.Info("database: host answers again", "host", h.name)
		}
	}
	h.silent, h.lastErr = silent, why
}

// cut closes the pool's connections to h.
func (w *Watch) cut(h *watchedHost, why string) {
	h.addrMu.Lock()
	addrs := make(map[string]bool, len(h.addrs))
	for a := range h.addrs {
		addrs[a] = true
	}
	h.addrMu.Unlock()
	if n := w.conns.cut(addrs); n > 0 {
		w.o.Log.Warn("database: connections cut", "host", h.name, "why", why, "connections", n)
	}
}

// Writable reports whether a probe found a writable host within the last
// three probe intervals and the probe timeout: readiness.
func (w *Watch) Writable() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.writer >= 0 && time.Since(w.writableAt) <= 3*w.o.Interval+w.o.ProbeTimeout
}

// WriterChanges is how many times a probe found the writable host to be
// another than the one before (the first one found is not a change).
func (w *Watch) WriterChanges() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.changes
}

// order is the pool's BeforeConnect: the host last found writable first,
// then the others in the URL's order, without the silent ones unless no
// other is left. cfg is a shallow copy (stdlib): its fields may be
// replaced, not the slices they point to.
func (w *Watch) order(_ context.Context, cfg *pgx.ConnConfig) error {
	groups := hostGroups(cfg)
	w.mu.Lock()
	if len(groups) != len(w.hosts) {
		w.mu.Unlock()
		return nil
	}
	var first, rest, silent [][]*pgconn.FallbackConfig
	for i, g := range groups {
		switch {
		case i == w.writer && !w.hosts[i].silent:
			first = append(first, g)
		case w.hosts[i].silent:
			silent = append(silent, g)
		default:
			rest = append(rest, g)
		}
	}
	w.mu.Unlock()
	ordered := append(first, rest...)
	if len(ordered) == 0 {
		ordered = silent
	}
	var fbs []*pgconn.FallbackConfig
	for _, g := range ordered {
		fbs = append(fbs, g...)
	}
	cfg.Host, cfg.Port, cfg.TLSConfig = fbs[0].Host, fbs[0].Port, fbs[0].TLSConfig
	cfg.Fallbacks = fbs[1:]
	return nil
}

package httpserve

import (
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/paygate/gateway/internal/httplimits"
)

// Connections per client (docs/security.md, "Connections per client"): a
// client that opens connections and then holds them — idle, or stalling a
// request — must not take every connection the gateway can serve. The bound
// is on the TCP peer, before TLS, so that a refused connection costs no
// handshake, and it holds whether the client ever authenticates or not.

// clientKeyBitsV6 is how much of an IPv6 address names one client: a /64 is
// one network's, and a host is given a whole one to pick addresses from.
const clientKeyBitsV6 = 64

// refusalLogEvery spaces the log lines about refused connections, so that a
// flood of them cannot flood the log too.
const refusalLogEvery = time.Second

// LimitConnsPerClient wraps ln so that one client address (an IPv4
// address, an IPv6 /64) holds at most max connections at once; one more is
// closed at once, with a reset, before anything is read from it or written
// to it. Connections from the trusted proxies are not counted: they carry
// many clients, which the proxy must bound. A negative max turns the bound
// off; zero is the default, 128.
func LimitConnsPerClient(ln net.Listener, max int, proxies []netip.Prefix, log *slog.Logger) net.Listener {
	if max < 0 {
		return ln
	}
	if max == 0 {
		max = httplimits.ConnsPerClientMaxDefault
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &clientConnLimiter{Listener: ln, max: max, proxies: proxies, log: log, open: map[netip.Prefix]int{}}
}

type clientConnLimiter struct {
	net.Listener
	max     int
	proxies []netip.Prefix
	log     *slog.Logger

	mu       sync.Mutex
	open     map[netip.Prefix]int // connections open per client; absent when none
	refused  int                  // since the last log line
	loggedAt time.Time
}

// Accept returns the next connection within its client's bound; the ones
// beyond it are closed here and never returned, so the server does not see
// them (Accept does not block on them either).
func (l *clientConnLimiter) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		key, counted := l.clientKey(c.RemoteAddr())
		if !counted {
			return c, nil
		}
		if l.acquire(key) {
			return &countedConn{Conn: c, release: func() { l.release(key) }}, nil
		}
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0) // a reset: no TIME_WAIT kept for a refused connection
		}
		_ = c.Close()
	}
}

// clientKey is the client a peer address counts for, and false for the
// peers that are not counted (trusted proxies, addresses that are not IP).
func (l *clientConnLimiter) clientKey(a net.Addr) (netip.Prefix, bool) {
	ta, ok := a.(*net.TCPAddr)
	if !ok {
		return netip.Prefix{}, false
	}
	ip := ta.AddrPort().Addr().Unmap().WithZone("")
	if !ip.IsValid() || inPrefixes(ip, l.proxies) {
		return netip.Prefix{}, false
	}
	return clientPrefix(ip), true
}

// clientPrefix is the prefix that names the client of address ip.
func clientPrefix(ip netip.Addr) netip.Prefix {
	bits := ip.BitLen()
	if ip.Is6() {
		bits = clientKeyBitsV6
	}
	p, _ := ip.Prefix(bits)
	return p
}

func (l *clientConnLimiter) acquire(key netip.Prefix) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[key] < l.max {
		l.open[key]++
		return true
	}
	l.refused++
	if now := time.Now(); now.Sub(l.loggedAt) >= refusalLogEvery {
		l.log.Warn("connections refused: too many open from one client",
			"client", key.String(), "conns_max", l.max, "refused", l.refused)
		l.loggedAt, l.refused = now, 0
	}
	return false
}

func (l *clientConnLimiter) release(key netip.Prefix) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[key]--; l.open[key] <= 0 {
		delete(l.open, key) // the map holds only clients with connections
	}
}

// openConns is the number of connections key holds (tests).
func (l *clientConnLimiter) openConns(key netip.Prefix) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open[key]
}

// countedConn gives its place back when it is closed, once however often
// Close is called.
type countedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *countedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// CloseWrite half-closes a TCP connection (net/http and the plain-HTTP
// answer use it to finish an answer before closing).
func (c *countedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

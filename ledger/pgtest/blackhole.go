package pgtest

import (
	"errors"
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// Blackhole is a loopback TCP proxy in front of a PostgreSQL server that can
// be frozen: from then on it forwards nothing in either direction and sends
// no RST — what a client sees of a server whose processes are stopped
// (SIGSTOP) or whose machine is cut off: connections stay open, nothing is
// answered, and new connections are accepted by the kernel and never
// greeted. It is safer than stopping real server processes (nothing to
// resume if the test dies) and needs no privileges.
type Blackhole struct {
	ln     net.Listener
	target [2]string // network, address of the server
	frozen atomic.Bool
	closed atomic.Int64 // connections the client closed while frozen

	mu    sync.Mutex
	conns []net.Conn
}

// NewBlackhole proxies to the server of databaseURL (TCP or a unix
// socket) on 127.0.0.1 port 0, until t ends.
func NewBlackhole(t testing.TB, databaseURL string) *Blackhole {
	t.Helper()
	cfg, err := pgconn.ParseConfig(databaseURL)
	if err != nil {
		t.Fatal(err)
	}
	network, addr := pgconn.NetworkAddress(cfg.Host, cfg.Port)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &Blackhole{ln: ln, target: [2]string{network, addr}}
	t.Cleanup(b.close)
	go b.accept()
	return b
}

// URL is databaseURL with its host replaced by the proxy.
func (b *Blackhole) URL(databaseURL string) string {
	u, err := url.Parse(databaseURL)
	if err != nil {
		return databaseURL
	}
	q := u.Query()
	q.Del("host")
	q.Del("port")
	u.RawQuery = q.Encode()
	u.Host = b.ln.Addr().String()
	return u.String()
}

// Addr is the proxy's address.
func (b *Blackhole) Addr() string { return b.ln.Addr().String() }

// Freeze stops all forwarding, for good.
func (b *Blackhole) Freeze() { b.frozen.Store(true) }

// ClosedWhileFrozen is how many connections their client closed after the
// freeze: a client that discards a connection to a silent server closes it.
func (b *Blackhole) ClosedWhileFrozen() int64 { return b.closed.Load() }

func (b *Blackhole) track(c net.Conn) {
	b.mu.Lock()
	b.conns = append(b.conns, c)
	b.mu.Unlock()
}

func (b *Blackhole) close() {
	b.ln.Close()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range b.conns {
		c.Close()
	}
}

func (b *Blackhole) accept() {
	for {
		c, err := b.ln.Accept()
		if err != nil {
			return
		}
		b.track(c)
		go b.serve(c)
	}
}

func (b *Blackhole) serve(client net.Conn) {
	if b.frozen.Load() {
		b.swallow(client) // accepted, never greeted
		return
	}
	server, err := net.Dial(b.target[0], b.target[1])
	if err != nil {
		client.Close()
		return
	}
	b.track(server)
	go b.pipe(server, client, false)
	b.pipe(client, server, true)
}

// pipe copies from src to dst until the freeze, then reads and drops what
// src sends (the kernel acknowledges it, as a frozen server's does). For
// the client's side it counts the client closing after the freeze.
func (b *Blackhole) pipe(src, dst net.Conn, fromClient bool) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && !b.frozen.Load() {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if b.frozen.Load() {
				if fromClient && (err == io.EOF || isReset(err)) {
					b.closed.Add(1)
				}
				return // frozen: never pass the close on
			}
			dst.Close()
			return
		}
	}
}

// swallow reads and drops everything a client sends to a frozen server.
func (b *Blackhole) swallow(c net.Conn) {
	buf := make([]byte, 4096)
	for {
		if _, err := c.Read(buf); err != nil {
			if err == io.EOF || isReset(err) {
				b.closed.Add(1)
			}
			return
		}
	}
}

// isReset is a client's connection reset (closed with unread data).
func isReset(err error) bool { return errors.Is(err, syscall.ECONNRESET) }

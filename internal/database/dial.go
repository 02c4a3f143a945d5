package database

import (
	"context"
	"net"
	"sync"
	"syscall"
	"time"
)

// The TCP settings of every connection to PostgreSQL (docs/ha.md, "a
// silent primary"). A server whose machine died or was cut off sends no RST:
// without them a connection waits for an answer until the kernel gives up
// (about 15 minutes of retransmissions) or pgx's context deadline fires.
//
//   - TCP_USER_TIMEOUT: data sent and not acknowledged for this long closes
//     the connection (a query, a COMMIT, to a dead peer);
//   - keepalives: an idle connection whose peer does not answer Idle +
//     Interval × Count is closed (a pooled connection to a dead peer is
//     found before a request takes it).
//
// Neither detects a server whose processes are frozen on a live kernel
// (SIGSTOP): the kernel acknowledges the bytes and the probes. That case is
// the Watch's (dbwatch.go) and the commit deadline's.
const (
	TCPUserTimeoutDefault    = 5 * time.Second
	KeepaliveIdleDefault     = 2 * time.Second
	KeepaliveIntervalDefault = 1 * time.Second
	KeepaliveCountDefault    = 3
)

// TCPOptions are the TCP settings of the connections to PostgreSQL; zero
// fields take the defaults above.
type TCPOptions struct {
	UserTimeout       time.Duration
	KeepaliveIdle     time.Duration
	KeepaliveInterval time.Duration
	KeepaliveCount    int
}

func (o *TCPOptions) defaults() {
	if o.UserTimeout == 0 {
		o.UserTimeout = TCPUserTimeoutDefault
	}
	if o.KeepaliveIdle == 0 {
		o.KeepaliveIdle = KeepaliveIdleDefault
	}
	if o.KeepaliveInterval == 0 {
		o.KeepaliveInterval = KeepaliveIntervalDefault
	}
	if o.KeepaliveCount == 0 {
		o.KeepaliveCount = KeepaliveCountDefault
	}
}

// dialer is pgx's DialFunc for o: keepalives and TCP_USER_TIMEOUT on TCP
// connections (a unix socket has neither), each connection recorded in
// conns (nil: not recorded) so that the Watch can cut the ones to a host
// that went silent.
func dialer(o TCPOptions, conns *connSet) func(ctx context.Context, network, addr string) (net.Conn, error) {
	d := &net.Dialer{
		KeepAliveConfig: net.KeepAliveConfig{Enable: true, Idle: o.KeepaliveIdle, Interval: o.KeepaliveInterval,
			Count: o.KeepaliveCount},
		Control: func(network, _ string, c syscall.RawConn) error {
			if network != "tcp" && network != "tcp4" && network != "tcp6" {
				return nil
			}
			var serr error
			if err := c.Control(func(fd uintptr) { serr = setUserTimeout(fd, o.UserTimeout) }); err != nil {
				return err
			}
			return serr
		},
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil || conns == nil {
			return c, err
		}
		return conns.add(c, addr), nil
	}
}

// connSet is every open connection of one pool, by the address it was
// dialled at.
type connSet struct {
	mu sync.Mutex
	m  map[*trackedConn]struct{}
}

func newConnSet() *connSet { return &connSet{m: map[*trackedConn]struct{}{}} }

// trackedConn is a connection of a connSet; it leaves the set when closed.
type trackedConn struct {
	net.Conn
	addr string
	set  *connSet
	once sync.Once
}

func (c *trackedConn) Close() error {
	c.once.Do(func() {
		c.set.mu.Lock()
		delete(c.set.m, c)
		c.set.mu.Unlock()
	})
	return c.Conn.Close()
}

func (s *connSet) add(c net.Conn, addr string) net.Conn {
	tc := &trackedConn{Conn: c, addr: addr, set: s}
	s.mu.Lock()
	s.m[tc] = struct{}{}
	s.mu.Unlock()
	return tc
}

// cut closes every connection dialled at one of addrs, whoever uses it: a
// statement waiting on it fails at once ("use of closed network
// connection"), and pgx, then database/sql, discard it. net.Conn's Close is
// safe while another goroutine reads. It returns how many it closed.
func (s *connSet) cut(addrs map[string]bool) int {
	s.mu.Lock()
	var victims []*trackedConn
	for c := range s.m {
		if addrs[c.addr] {
			victims = append(victims, c)
		}
	}
	s.mu.Unlock()
	for _, c := range victims {
		_ = c.Close()
	}
	return len(victims)
}

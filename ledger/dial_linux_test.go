package ledger

import (
	"net"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/database"
	"golang.org/x/sys/unix"
)

// Every connection database.OpenDB's configuration makes has keepalives and
// TCP_USER_TIMEOUT at the settings of docs/ha.md, so that a server whose
// machine is gone (no RST) is found dead in seconds.
func TestConnectionsHaveKeepalivesAndUserTimeout(t *testing.T) {
	t.Parallel()
	addr := fakeServer(t, answerError("ERROR", "42601"))
	c := connectFake(t, addr)
	raw, ok := c.PgConn().Conn().(*net.TCPConn)
	if !ok {
		t.Fatalf("the connection is %T, not TCP", c.PgConn().Conn())
	}
	sc, err := raw.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name       string
		level, opt int
		want       int
	}{
		{"SO_KEEPALIVE", unix.SOL_SOCKET, unix.SO_KEEPALIVE, 1},
		{"TCP_KEEPIDLE (s)", unix.IPPROTO_TCP, unix.TCP_KEEPIDLE, int(database.KeepaliveIdleDefault / time.Second)},
		{"TCP_KEEPINTVL (s)", unix.IPPROTO_TCP, unix.TCP_KEEPINTVL, int(database.KeepaliveIntervalDefault / time.Second)},
		{"TCP_KEEPCNT", unix.IPPROTO_TCP, unix.TCP_KEEPCNT, database.KeepaliveCountDefault},
		{"TCP_USER_TIMEOUT (ms)", unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT, int(database.TCPUserTimeoutDefault / time.Millisecond)},
	} {
		var got int
		var gerr error
		if err := sc.Control(func(fd uintptr) { got, gerr = unix.GetsockoptInt(int(fd), tt.level, tt.opt) }); err != nil {
			t.Fatal(err)
		}
		if gerr != nil || got != tt.want {
			t.Errorf("%s = %d (%v), want %d", tt.name, got, gerr, tt.want)
		}
	}
}

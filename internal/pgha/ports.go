package pgha

import (
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
)

// Ports below Linux's ephemeral range (32768–60999 by default): a port in
// that range can be held by a client socket in TIME-WAIT, and a server
// restarted on it then fails to bind (ha.md, measured). PostgreSQL servers
// that come and go during a failover test keep their port, so they take
// one from below.
const (
	portLow  = 20000
	portHigh = 32000
)

// FreePorts returns n distinct loopback TCP ports below the ephemeral range
// that nothing listens on now. Another process may take one before it is
// used; the callers' servers then fail to start with "address already in
// use", which names the port.
func FreePorts(n int) ([]int, error) {
	var ports []int
	seen := map[int]bool{}
	for tries := 0; len(ports) < n; tries++ {
		if tries > 200 {
			return nil, fmt.Errorf("pgha: no free loopback port between %d and %d", portLow, portHigh)
		}
		p := portLow + rand.IntN(portHigh-portLow) //nolint:gosec // a port number, not a secret
		if seen[p] || !portFree(p) {
			continue
		}
		seen[p] = true
		ports = append(ports, p)
	}
	return ports, nil
}

// portFree reports whether a listener can be opened on 127.0.0.1:p.
func portFree(p int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
	if err != nil {
		return false
	}
	_ = l.Close()
	return true
}

package callbackurl

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
)

// Dialer is the connect-time half of the rules, for the sender's
// transport. For a host name it applies Validate's host rules (checkHost:
// syntax, numeric IPv4 forms, reserved names), resolves it, and judges EVERY resolved address with
// AllowList.Check before dialling any: a name with one refused address
// among public ones (a rebinding trick: the public one is made to fail so
// that the client falls back to the next) is refused as a whole. It then
// dials the addresses in turn with a net.Dialer whose Control runs
// AllowList.Check once more on the socket's very address, so that
// nothing but a judged address is ever connected to.
type Dialer struct {
	allow  AllowList
	lookup func(ctx context.Context, host string) ([]netip.Addr, error)
	// dial connects to one judged address; dialer.DialContext but in
	// tests, which record what would be dialled instead of sending
	// packets to reserved addresses.
	dial func(ctx context.Context, network, address string) (net.Conn, error)
}

// NewDialer returns a Dialer for allow. base gives time-outs and
// keep-alive (nil: zero values); its Control is replaced. lookup resolves
// a name (nil: net.DefaultResolver); tests give their own to avoid DNS.
func NewDialer(allow AllowList, base *net.Dialer, lookup func(ctx context.Context, host string) ([]netip.Addr, error)) *Dialer {
	d := &net.Dialer{}
	if base != nil {
		*d = *base
	}
	d.Control = allow.Control
	if lookup == nil {
		lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	return &Dialer{allow: allow, lookup: lookup, dial: d.DialContext}
}

// DialContext is for http.Transport.DialContext. Refusals are
// *BlockedAddressError for an address and *Error for a name.
func (d *Dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, portText, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("callbacks: refused to connect to %q: not a host and port", address)
	}
	port, err := net.LookupPort(network, portText)
	if err != nil {
		return nil, err
	}
	addrs, err := d.resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	for _, a := range addrs {
		if err := d.allow.Check(a); err != nil {
			return nil, err
		}
	}
	var errs []error
	for _, a := range addrs {
		c, err := d.dial(ctx, network, netip.AddrPortFrom(a, uint16(port)).String())
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

// resolve gives the addresses of host: itself for an IP literal, else the
// resolver's answer to a name that passes the name rules.
func (d *Dialer) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	if err := checkHost(d.allow, host); err != nil { // Validate's host rules, numeric forms included
		return nil, err
	}
	addrs, err := d.lookup(ctx, host)
	if err != nil {
		return nil, err
	}
	if len(addrs) == 0 {
		return nil, &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
	}
	return addrs, nil
}

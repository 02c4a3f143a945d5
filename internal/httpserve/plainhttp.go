package httpserve

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"
)

// Plain HTTP on the HTTPS port. Left to itself, net/http fails the TLS
// handshake with "tls: first record does not look like a TLS handshake"
// and writes "Client sent an HTTP request to an HTTPS server." in plain
// text, outside the envelope. The gateway looks at the first bytes itself,
// below TLS: a connection that opens with an HTTP method gets a 400 in the
// envelope, in plain HTTP (the only thing such a client can read), and is
// closed; anything else is handed to TLS untouched.

// messagePlainHTTP is the message of that 400.
const messagePlainHTTP = "this port speaks HTTPS only: send the request over TLS (https://)"

// plainHTTPSniffBytesMax is how many bytes decide: a method of up to seven
// letters and its space ("OPTIONS ", "CONNECT ").
const plainHTTPSniffBytesMax = 8

// After the 400, the rest of the request is read and dropped for a moment
// before the connection is closed: closing with unread bytes makes the
// kernel send a reset, which can destroy the answer before the client has
// read it.
const (
	plainHTTPLinger        = time.Second
	plainHTTPLingerBytes   = 64 << 10
	tlsRecordTypeHandshake = 0x16
)

// errPlainHTTP ends the TLS handshake of a connection that spoke plain HTTP
// (net/http logs it as a handshake error).
var errPlainHTTP = errors.New("plain HTTP on the HTTPS port, answered 400")

// RefusePlainHTTP wraps ln, the listener under TLS, so that a client
// speaking plain HTTP gets an enveloped 400 instead of a failed handshake.
// Accept does not read: each connection looks at its first bytes when TLS
// first reads from it, under the handshake's deadline.
func RefusePlainHTTP(ln net.Listener, log *slog.Logger) net.Listener {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &plainHTTPListener{Listener: ln, log: log}
}

type plainHTTPListener struct {
	net.Listener
	log *slog.Logger
}

func (l *plainHTTPListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &sniffConn{Conn: c, log: l.log}, nil
}

// sniffConn holds back the first bytes of a connection until they tell TLS
// from plain HTTP.
type sniffConn struct {
	net.Conn
	log     *slog.Logger
	once    sync.Once
	pending []byte // read while sniffing, not yet given to TLS
	err     error  // the error that ended sniffing, after pending
}

func (c *sniffConn) Read(p []byte) (int, error) {
	c.once.Do(c.sniff)
	if len(c.pending) > 0 {
		n := copy(p, c.pending)
		c.pending = c.pending[n:]
		return n, nil
	}
	if c.err != nil {
		return 0, c.err
	}
	return c.Conn.Read(p)
}

// sniff reads until the first bytes decide, then answers plain HTTP or
// keeps the bytes for TLS.
func (c *sniffConn) sniff() {
	buf := make([]byte, 0, plainHTTPSniffBytesMax)
	for {
		n, err := c.Conn.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		switch sniffFirstBytes(buf) {
		case sniffPlainHTTP:
			c.answerPlainHTTP()
			c.err = errPlainHTTP
			return
		case sniffOther:
			c.pending = buf
			return
		}
		if err != nil {
			c.pending, c.err = buf, err
			return
		}
	}
}

type sniffResult int

const (
	sniffUndecided sniffResult = iota
	sniffPlainHTTP
	sniffOther // TLS, or something else TLS will refuse
)

// sniffFirstBytes decides from a connection's first bytes: a TLS record
// starts with its type (a handshake, 0x16); an HTTP request starts with a
// method, upper-case letters, and a space.
func sniffFirstBytes(b []byte) sniffResult {
	if len(b) == 0 {
		return sniffUndecided
	}
	if b[0] == tlsRecordTypeHandshake {
		return sniffOther
	}
	for i, ch := range b {
		switch {
		case ch >= 'A' && ch <= 'Z':
		case ch == ' ' && i >= 3: // the shortest methods: GET, PUT
			return sniffPlainHTTP
		default:
			return sniffOther
		}
	}
	if len(b) >= plainHTTPSniffBytesMax {
		return sniffOther
	}
	return sniffUndecided
}

// plainHTTPEnvelope is the spec's Response<T> (section 2.1), which api
// writes for every other answer: spelled here because this answer is
// written below HTTP, before api's router. api's golden test of this answer
// (400_plain_http) holds the two to the same bytes.
type plainHTTPEnvelope struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data"`
}

// plainHTTPAnswer is the whole answer to plain HTTP: a 400 in the envelope
// with its request id, and the connection closed.
func plainHTTPAnswer(requestID string) []byte {
	body, _ := json.Marshal(plainHTTPEnvelope{Code: 400, Message: messagePlainHTTP}) // cannot fail
	body = append(body, '\n')
	return fmt.Appendf(nil, "HTTP/1.1 400 Bad Request\r\n"+
		"Content-Type: application/json; charset=utf-8\r\n"+
		"Content-Length: %d\r\n"+
		"Connection: close\r\n"+
		"X-Request-Id: %s\r\n"+
		"\r\n%s", len(body), requestID, body)
}

// answerPlainHTTP writes the 400, then reads and drops what the client
// sends for a moment (plainHTTPLinger) so that the close does not reset the
// answer away.
func (c *sniffConn) answerPlainHTTP() {
	id := NewRequestID()
	c.log.Info("request", "request_id", id, "route", "plain_http", "status", 400,
		"client_ip", peerAddr(c.RemoteAddr().String()).String())
	_ = c.SetWriteDeadline(time.Now().Add(plainHTTPLinger))
	if _, err := c.Conn.Write(plainHTTPAnswer(id)); err != nil {
		return
	}
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
	_ = c.SetReadDeadline(time.Now().Add(plainHTTPLinger))
	_, _ = io.CopyN(io.Discard, c.Conn, plainHTTPLingerBytes)
}

// CloseWrite passes a half-close on (net/http uses it on TLS's conn).
func (c *sniffConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

package ledger

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/paygate/gateway/internal/database"
	"github.com/paygate/gateway/postings"
)

// fakeServer is a loopback server that speaks just enough of PostgreSQL's
// protocol for pgx to connect (trust authentication), then answers the first
// query with answer: an error, or nothing at all (the connection is cut, as
// when the server's machine dies mid-query). It returns its address.
func fakeServer(t *testing.T, answer func(be *pgproto3.Backend, c net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				be := pgproto3.NewBackend(c, c)
				if _, err := be.ReceiveStartupMessage(); err != nil {
					return
				}
				be.Send(&pgproto3.AuthenticationOk{})
				be.Send(&pgproto3.BackendKeyData{ProcessID: 1, SecretKey: []byte{0, 0, 0, 2}})
				be.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
				if err := be.Flush(); err != nil {
					return
				}
				for {
					msg, err := be.Receive()
					if err != nil {
						return
					}
					if _, ok := msg.(*pgproto3.Query); ok {
						answer(be, c)
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// answerError answers a query with an ErrorResponse, then ReadyForQuery
// (unless the error is FATAL, after which a server closes the connection).
func answerError(severity, code string) func(*pgproto3.Backend, net.Conn) {
	return func(be *pgproto3.Backend, c net.Conn) {
		be.Send(&pgproto3.ErrorResponse{Severity: severity, SeverityUnlocalized: severity, Code: code, Message: "fake " + code})
		if severity != "FATAL" {
			be.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
		}
		_ = be.Flush()
		if severity != "FATAL" {
			// Keep the connection open: only the client may close it.
			buf := make([]byte, 1)
			_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
			_, _ = c.Read(buf)
		}
	}
}

func connectFake(t *testing.T, addr string) *pgx.Conn {
	t.Helper()
	// Not the 2 s default connect_timeout: connecting is not under test,
	// and a loaded machine can take that long to run the fake's goroutine.
	cfg, _, err := database.ConnConfig("postgres://gw@"+addr+"/gateway?sslmode=disable", database.DBOptions{ConnectTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatalf("connecting to the fake server: %v", err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

// What pgx reports while a primary fails over — a cut connection
// ("unexpected EOF", no SQLSTATE), a refused dial ("failed to connect"), the
// server's FATAL 57P01 (shutdown) and 25006 (a write on a server that no
// longer takes writes) — is EUNAVAILABLE (503 with Retry-After) and an
// outage (the writer does not retry it and fails the queue behind it). After
// 57P01 and 25006 the connection is closed, so that the pool drops it
// instead of handing it out again; after an ordinary error it stays open.
func TestFailoverErrorsAreUnavailable(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name       string
		answer     func(*pgproto3.Backend, net.Conn)
		connClosed bool
	}{
		{"connection cut mid-query", func(*pgproto3.Backend, net.Conn) {}, true},
		{"57P01 admin shutdown", answerError("FATAL", "57P01"), true},
		{"25006 read-only transaction", answerError("ERROR", "25006"), true},
		{"57P03 cannot connect now", answerError("FATAL", "57P03"), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := connectFake(t, fakeServer(t, tt.answer))
			_, err := c.Exec(context.Background(), "insert into t values (1)")
			if err == nil {
				t.Fatal("no error")
			}
			mapped := mapError(fmt.Errorf("ledger: statement: %w", err))
			if postings.ErrorCode(mapped) != postings.EUNAVAILABLE || !isOutage(mapped) {
				t.Errorf("%v mapped to %v (outage %v), want an EUNAVAILABLE outage", err, mapped, isOutage(mapped))
			}
			if c.IsClosed() != tt.connClosed {
				t.Errorf("after %v the connection is closed: %v, want %v", err, c.IsClosed(), tt.connClosed)
			}
		})
	}

	t.Run("an ordinary error keeps the connection", func(t *testing.T) {
		t.Parallel()
		c := connectFake(t, fakeServer(t, answerError("ERROR", "42P01")))
		if _, err := c.Exec(context.Background(), "select * from nosuch"); err == nil {
			t.Fatal("no error")
		}
		if c.IsClosed() {
			t.Error("an undefined-table error closed the connection")
		}
	})

	t.Run("refused dial on every host", func(t *testing.T) {
		t.Parallel()
		// Two ports nothing listens on: listen, note the port, close.
		var hosts []string
		for i := 0; i < 2; i++ {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			hosts = append(hosts, ln.Addr().String())
			ln.Close()
		}
		cfg, _, err := database.ConnConfig("postgres://gw@"+hosts[0]+","+hosts[1]+"/gateway?sslmode=disable&target_session_attrs=read-write", database.DBOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = pgx.ConnectConfig(context.Background(), cfg)
		if err == nil {
			t.Fatal("connected to nothing")
		}
		if mapped := mapError(err); postings.ErrorCode(mapped) != postings.EUNAVAILABLE || !isOutage(mapped) {
			t.Errorf("%v mapped to %v, want an EUNAVAILABLE outage", err, mapped)
		}
	})
}

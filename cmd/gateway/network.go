package main

import (
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/paygate/gateway/api/client"
	"github.com/paygate/gateway/internal/app"
	"github.com/paygate/gateway/internal/config"
	"github.com/paygate/gateway/internal/httplimits"
	"github.com/paygate/gateway/internal/netclient"
)

// The simulator: `gateway network …` calls the internal network API
// (docs/network.md; its listener is internal/app's) through
// internal/netclient, as the card processor would.

// networkFlags adds the connection flags every network command shares.
// Their defaults are the configuration's, whose errors come at the call.
func networkFlags(e *env, fs *flag.FlagSet) (addr *string, plain *bool) {
	def := config.Default()
	if cfg, err := e.config(); err == nil {
		def = cfg
	}
	addr = fs.String("addr", def.InternalAddr, "the internal API: host:port or a URL (GATEWAY_INTERNAL_ADDR)")
	plain = fs.Bool("plain-http", def.PlainHTTP, "call over plain HTTP (GATEWAY_PLAIN_HTTP)")
	return addr, plain
}

// newNetworkClient connects to addr with the token of the configuration,
// trusting the system's roots plus the self-signed certificate of the data
// directory and GATEWAY_TLS_CERT, when present.
func newNetworkClient(e *env, addr string, plain bool) (*netclient.Client, error) {
	cfg, err := e.config()
	if err != nil {
		return nil, err
	}
	token, _, err := app.InternalToken(cfg, false)
	if err != nil {
		return nil, err
	}
	base := addr
	if !strings.Contains(addr, "://") {
		scheme := "https"
		if plain {
			scheme = "http"
		}
		base = scheme + "://" + addr
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, usageError(fmt.Sprintf("--addr: %q is not host:port or an http(s) URL", addr))
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	for _, f := range []string{filepath.Join(cfg.DataDir, "tls", "cert.pem"), cfg.TLSCert} {
		if f == "" {
			continue
		}
		if b, err := os.ReadFile(f); err == nil {
			pool.AppendCertsFromPEM(b)
		}
	}
	hc := client.NewHTTPClient(pool, 2)
	hc.Timeout = httplimits.RequestBudgetDefault + 10*time.Second // the server answers within its budget
	return netclient.New(netclient.Config{BaseURL: u.Scheme + "://" + u.Host, Token: token, HTTPClient: hc})
}

// flagOfField names the command-line flag of a request field.
var flagOfField = map[string]string{
	"messageId": "--message-id", "cardNo": "--card-no", "authId": "--auth-id", "amount": "--amount",
	"currency": "--currency", "merchantName": "--merchant-name", "mcc": "--mcc",
	"merchantCountry": "--merchant-country", "limit": "--limit",
}

// callError is the command's error for a failed call: a 400 names the flag
// of its field (exit 2), anything else exits 1 with the status and code.
func callError(err error) error {
	var e *client.Error
	if !errors.As(err, &e) {
		return err
	}
	switch {
	case e.Status == 0:
		return fmt.Errorf("calling the internal API: %w", e.Err)
	case e.Code == 0:
		return &exitError{code: 1, msg: fmt.Sprintf("HTTP %d: %v", e.Status, e.Err)}
	case e.Status == http.StatusBadRequest:
		if f := flagOfField[e.Field]; f != "" {
			return &exitError{code: 2, msg: f + strings.TrimPrefix(e.Message, e.Field)}
		}
		return &exitError{code: 2, msg: e.Message}
	}
	return &exitError{code: 1, msg: fmt.Sprintf("HTTP %d, code %d: %s", e.Status, int(e.Code), e.Message)}
}

// decimalFlag is an amount flag: the gateway checks it against the
// currency; the flag only that it is a number.
type decimalFlag struct{ d client.Decimal }

func (f *decimalFlag) String() string { return f.d.String() }

func (f *decimalFlag) Set(v string) error {
	d, err := client.ParseDecimal(strings.TrimSpace(v))
	if err != nil {
		return errors.New("is not a decimal number")
	}
	f.d = d
	return nil
}

// amountFlag adds --amount.
func amountFlag(fs *flag.FlagSet, usage string) *decimalFlag {
	f := &decimalFlag{}
	fs.Var(f, "amount", usage)
	return f
}

// parseNetworkFlags parses the flags, then checks that the required ones
// (by name) were given.
func parseNetworkFlags(fs *flag.FlagSet, args []string, requiredFlags ...string) (help bool, err error) {
	if help, err := parseFlags(fs, args); help || err != nil {
		return help, err
	}
	for _, name := range requiredFlags {
		if fs.Lookup(name).Value.String() == "" {
			return false, usageError("--" + name + " is required")
		}
	}
	return false, nil
}

// messageID returns the --message-id given, or a new one, told on stderr
// so that the message can be repeated.
func messageID(e *env, given string) string {
	if given != "" {
		return given
	}
	b := make([]byte, 10)
	_, _ = rand.Read(b)
	id := "cli-" + hex.EncodeToString(b)
	fmt.Fprintf(e.stderr, "messageId %s (repeat with --message-id %s: no second effect)\n", id, id)
	return id
}

// runNetwork connects, calls, and prints the answer's data as JSON.
func runNetwork[T any](e *env, addr string, plain bool, call func(nc *netclient.Client) (T, error)) error {
	nc, err := newNetworkClient(e, addr, plain)
	if err != nil {
		return err
	}
	v, err := call(nc)
	if err != nil {
		return callError(err)
	}
	return printJSON(e, v)
}

func cmdNetworkAuthorize(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "network authorize", "Send an authorization request, as the card network; prints the decision.")
	addr, plain := networkFlags(e, fs)
	cardNo := fs.String("card-no", "", "the card (required)")
	amount := amountFlag(fs, "decimal amount in --currency, e.g. 10.00 (required)")
	currency := fs.String("currency", "", "the transaction's ISO 4217 currency (required)")
	name := fs.String("merchant-name", "Simulator Coffee", "the card acceptor's name")
	mcc := fs.String("mcc", "5814", "the merchant category code, 4 digits")
	country := fs.String("merchant-country", "US", "the card acceptor's ISO 3166 country")
	msg := fs.String("message-id", "", "the network message id (default: a new one, printed on stderr)")
	if help, err := parseNetworkFlags(fs, args, "card-no", "amount", "currency"); help || err != nil {
		return err
	}
	req := netclient.AuthorizeRequest{MessageID: messageID(e, *msg), CardNo: *cardNo, Amount: amount.d, Currency: strings.ToUpper(*currency),
		MerchantName: *name, MCC: *mcc, MerchantCountry: *country}
	return runNetwork(e, *addr, *plain, func(nc *netclient.Client) (*netclient.Decision, error) { return nc.Authorize(ctx, req) })
}

func cmdNetworkClear(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "network clear", "Capture an authorization (partial, exact or above the hold), as the card network.")
	addr, plain := networkFlags(e, fs)
	authID := fs.String("auth-id", "", "the authorization (required)")
	amount := amountFlag(fs, "decimal amount in the authorization's transaction currency (required)")
	msg := fs.String("message-id", "", "the network message id (default: a new one, printed on stderr)")
	if help, err := parseNetworkFlags(fs, args, "auth-id", "amount"); help || err != nil {
		return err
	}
	req := netclient.ClearRequest{MessageID: messageID(e, *msg), AuthID: *authID, Amount: amount.d}
	return runNetwork(e, *addr, *plain, func(nc *netclient.Client) (*netclient.HoldResult, error) { return nc.Clear(ctx, req) })
}

func cmdNetworkReverse(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "network reverse", "Release an authorization's hold, all of it or --amount of it, as the card network.")
	addr, plain := networkFlags(e, fs)
	authID := fs.String("auth-id", "", "the authorization (required)")
	amount := amountFlag(fs, "decimal amount in the transaction currency (default: the whole hold)")
	msg := fs.String("message-id", "", "the network message id (default: a new one, printed on stderr)")
	if help, err := parseNetworkFlags(fs, args, "auth-id"); help || err != nil {
		return err
	}
	req := netclient.ReverseRequest{MessageID: messageID(e, *msg), AuthID: *authID}
	if amount.d.IsSet() {
		req.Amount = &amount.d
	}
	return runNetwork(e, *addr, *plain, func(nc *netclient.Client) (*netclient.HoldResult, error) { return nc.Reverse(ctx, req) })
}

func cmdNetworkRefund(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "network refund", "Refund to a card (its funding account once cancelled), as the card network.")
	addr, plain := networkFlags(e, fs)
	cardNo := fs.String("card-no", "", "the card (required)")
	amount := amountFlag(fs, "decimal amount, e.g. 5.00 (required)")
	currency := fs.String("currency", "", "the card's currency (required)")
	msg := fs.String("message-id", "", "the network message id (default: a new one, printed on stderr)")
	if help, err := parseNetworkFlags(fs, args, "card-no", "amount", "currency"); help || err != nil {
		return err
	}
	req := netclient.RefundRequest{MessageID: messageID(e, *msg), CardNo: *cardNo, Amount: amount.d, Currency: strings.ToUpper(*currency)}
	return runNetwork(e, *addr, *plain, func(nc *netclient.Client) (*netclient.Refund, error) { return nc.Refund(ctx, req) })
}

func cmdNetworkAttempts(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "network attempts", "List a card's authorization attempts with their codes, newest first.")
	addr, plain := networkFlags(e, fs)
	cardNo := fs.String("card-no", "", "the card (required)")
	limit := fs.Int("limit", 100, "at most this many, 1 to 500")
	if help, err := parseNetworkFlags(fs, args, "card-no"); help || err != nil {
		return err
	}
	type list struct {
		List []netclient.AuthorizationAttempt `json:"list"`
	}
	return runNetwork(e, *addr, *plain, func(nc *netclient.Client) (list, error) {
		l, err := nc.Attempts(ctx, *cardNo, *limit)
		return list{List: l}, err
	})
}

func cmdNetworkShow(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "network show", "Print one authorization: what is held, captured and released.")
	addr, plain := networkFlags(e, fs)
	authID := fs.String("auth-id", "", "the authorization (required)")
	if help, err := parseNetworkFlags(fs, args, "auth-id"); help || err != nil {
		return err
	}
	return runNetwork(e, *addr, *plain, func(nc *netclient.Client) (*netclient.Authorization, error) { return nc.Authorization(ctx, *authID) })
}

package main

// End-to-end tests of the gateway binary: the real commands, run in-process
// through run() with their own environment, against a fresh PostgreSQL
// database (ledger/pgtest) or, for the embedded default, a cluster of their
// own in a data directory.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/app"
	"github.com/paygate/gateway/ledger/pgtest"
)

// commandTimeout bounds one command; the embedded cluster's first start
// (initdb with fsync on) is the slowest thing here.
const commandTimeout = 2 * time.Minute

// syncBuffer is a bytes.Buffer that a running command writes to while the
// test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// gateway is one installation: an environment (database, data directory)
// that commands run against.
type gateway struct {
	t    *testing.T
	env  map[string]string
	refs atomic.Int64 // the bank references given so far (bankReference)
}

// newGateway returns an installation on a fresh database of the test server
// and its own data directory.
func newGateway(t *testing.T) *gateway {
	t.Helper()
	return &gateway{t: t, env: map[string]string{
		"DATABASE_URL": pgtest.NewDatabase(t),
		// The test server's superuser (docs/security.md, "Database roles").
		"DATABASE_ALLOW_SUPERUSER": "1",
		"GATEWAY_DATA_DIR":         t.TempDir(),
		"GATEWAY_ADDR":             "127.0.0.1:0",
		"GATEWAY_LOG_LEVEL":        "warn",
		// The internal network API's default port is fixed: tests in
		// parallel each take a free one.
		"GATEWAY_INTERNAL_ADDR": "127.0.0.1:0",
		"GATEWAY_CONSOLE_ADDR":  "127.0.0.1:0",
		// No drain on stop: a test stops many gateways (TestServeDrains
		// sets its own).
		"GATEWAY_SHUTDOWN_DRAIN": "0s",
	}}
}

// result is what a finished command left.
type result struct {
	stdout, stderr string
	err            error
}

func (r result) code() int {
	if r.err == nil {
		return 0
	}
	return exitCode(r.err)
}

// run runs one command to completion.
func (g *gateway) run(args ...string) result {
	g.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	var stdout, stderr syncBuffer
	err := run(ctx, append([]string{"gateway"}, args...), g.getenv, &stdout, &stderr)
	return result{stdout: stdout.String(), stderr: stderr.String(), err: err}
}

// mustRun runs a command that must succeed.
func (g *gateway) mustRun(args ...string) string {
	g.t.Helper()
	r := g.run(args...)
	if r.err != nil {
		g.t.Fatalf("gateway %s: %v (exit %d)\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.err, r.code(), r.stdout, r.stderr)
	}
	return r.stdout
}

// mustFail runs a command that must fail with a non-zero exit status and a
// message containing want.
func (g *gateway) mustFail(want string, args ...string) {
	g.t.Helper()
	r := g.run(args...)
	if r.err == nil {
		g.t.Fatalf("gateway %s succeeded, want a failure naming %q\nstdout:\n%s", strings.Join(args, " "), want, r.stdout)
	}
	if r.code() == 0 {
		g.t.Errorf("gateway %s: exit status 0 with error %v", strings.Join(args, " "), r.err)
	}
	if !strings.Contains(r.err.Error(), want) {
		g.t.Errorf("gateway %s: error %q does not name %q", strings.Join(args, " "), r.err, want)
	}
}

// credentials is the output of `merchant create`.
type credentials struct {
	ShopNo     string   `json:"shopNo"`
	PublicKey  string   `json:"publicKey"`
	PrivateKey string   `json:"privateKey"`
	Currencies []string `json:"currencies"`
	// WebhookSecret is the Standard Webhooks secret (whsec_…).
	WebhookSecret string `json:"webhookSecret"`
}

func (g *gateway) createMerchant(name, currencies string) credentials {
	g.t.Helper()
	out := g.mustRun("merchant", "create", "--name", name, "--currencies", currencies)
	var c credentials
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		g.t.Fatalf("merchant create printed %q: %v", out, err)
	}
	if !regexp.MustCompile(`^SH\d{10}$`).MatchString(c.ShopNo) {
		g.t.Errorf("shopNo %q", c.ShopNo)
	}
	if !strings.HasPrefix(c.PublicKey, "pk_") || len(c.PublicKey) < 40 {
		g.t.Errorf("publicKey %q", c.PublicKey)
	}
	if !strings.HasPrefix(c.PrivateKey, "sk_") || len(c.PrivateKey) < 40 {
		g.t.Errorf("privateKey %q", c.PrivateKey)
	}
	return c
}

// deposit runs `merchant deposit` and returns the balance it printed, as the
// JSON number's text.
func (g *gateway) deposit(shopNo, currency, amount string, extra ...string) (balance string, seq int64) {
	g.t.Helper()
	args := append([]string{"merchant", "deposit", "--shop-no", shopNo, "--currency", currency, "--amount", amount}, extra...)
	if !slices.Contains(extra, "--bank-reference") {
		args = append(args, "--bank-reference", g.bankReference(extra))
	}
	out := g.mustRun(args...)
	var v struct {
		Kind    string          `json:"kind"`
		Seq     int64           `json:"seq"`
		Balance json.RawMessage `json:"balance"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		g.t.Fatalf("merchant deposit printed %q: %v", out, err)
	}
	if v.Kind != "DEPOSIT" {
		g.t.Errorf("merchant deposit: kind %q, want DEPOSIT", v.Kind)
	}
	return string(v.Balance), v.Seq
}

// bankReference is a deposit's bank reference when the test gives none:
// the idempotency key's own (a replay must be the same deposit), else a
// fresh one.
func (g *gateway) bankReference(extra []string) string {
	if i := slices.Index(extra, "--idempotency-key"); i >= 0 && i+1 < len(extra) {
		return "ref-" + extra[i+1]
	}
	return fmt.Sprintf("ref-%d", g.refs.Add(1))
}

func (g *gateway) auditOK(args ...string) string {
	g.t.Helper()
	out := g.mustRun(append([]string{"audit", "verify"}, args...)...)
	if !strings.HasPrefix(out, "OK: ") {
		g.t.Errorf("audit verify printed %q, want a line starting with OK:", out)
	}
	return out
}

// server is a running `gateway serve`.
type server struct {
	t           *testing.T
	addr        string // host:port
	scheme      string
	fingerprint string
	client      *http.Client
	cancel      context.CancelFunc
	done        chan error
	stdout      *syncBuffer
	stderr      *syncBuffer
	stopOnce    sync.Once
	stopErr     error
}

var (
	listeningRe   = regexp.MustCompile(`listening on (https?)://(\S+)`)
	fingerprintRe = regexp.MustCompile(`TLS certificate (\S+), SHA-256 fingerprint ([0-9A-F:]{95})`)
)

// serve starts `gateway serve` and waits until it answers /healthz.
func (g *gateway) serve(args ...string) *server {
	g.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &server{t: g.t, cancel: cancel, done: make(chan error, 1), stdout: &syncBuffer{}, stderr: &syncBuffer{}}
	go func() {
		s.done <- run(ctx, append([]string{"gateway", "serve"}, args...), g.getenv, s.stdout, s.stderr)
	}()
	g.t.Cleanup(func() { _ = s.stop() })

	deadline := time.Now().Add(commandTimeout)
	for {
		if m := listeningRe.FindStringSubmatch(s.stdout.String()); m != nil {
			s.scheme, s.addr = m[1], m[2]
			break
		}
		select {
		case err := <-s.done:
			s.done <- err // for stop
			g.t.Fatalf("serve exited before listening: %v\nstdout:\n%s\nstderr:\n%s", err, s.stdout, s.stderr)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			g.t.Fatalf("serve did not listen within %s\nstdout:\n%s\nstderr:\n%s", commandTimeout, s.stdout, s.stderr)
		}
	}
	s.client = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{}}
	if s.scheme == "https" {
		s.client.Transport = &http.Transport{TLSClientConfig: g.pinnedTLS(s)}
	}
	for {
		resp, err := s.client.Get(s.url("/healthz"))
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
		if time.Now().After(deadline) {
			g.t.Fatalf("GET /healthz did not answer 200 within %s: %v", commandTimeout, err)
		}
		// serve may stop after its first listener (another one's port taken):
		// say so at once, with its error, rather than wait out the deadline.
		select {
		case err := <-s.done:
			s.done <- err // for stop
			g.t.Fatalf("serve exited before it answered /healthz: %v\nstderr:\n%s", err, s.stderr)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// pinnedTLS trusts exactly the certificate serve printed: it verifies the
// chain and host name against that certificate (self-signed, for
// 127.0.0.1) and checks the printed SHA-256 fingerprint.
func (g *gateway) pinnedTLS(s *server) *tls.Config {
	g.t.Helper()
	m := fingerprintRe.FindStringSubmatch(s.stdout.String())
	if m == nil {
		g.t.Fatalf("serve printed no certificate fingerprint:\n%s", s.stdout)
	}
	certFile := m[1]
	// The check below reads its own copy: the handshakes of clients made
	// earlier run on their own goroutines while this writes s.fingerprint
	// again (a data race the race detector caught under load).
	pinned := m[2]
	s.fingerprint = pinned
	if want := filepath.Join(g.env["GATEWAY_DATA_DIR"], "tls", "cert.pem"); certFile != want {
		g.t.Errorf("certificate %s, want the self-signed one in %s", certFile, want)
	}
	pemBytes, err := os.ReadFile(certFile)
	if err != nil {
		g.t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pemBytes) {
		g.t.Fatalf("%s holds no certificate", certFile)
	}
	blk, _ := pem.Decode(pemBytes)
	if sum := sha256.Sum256(blk.Bytes); app.Fingerprint(sum[:]) != s.fingerprint {
		g.t.Fatalf("printed fingerprint %s is not that of %s (%s)", s.fingerprint, certFile, app.Fingerprint(sum[:]))
	}
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		RootCAs:    pool,
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			if len(raw) == 0 {
				return errors.New("no certificate")
			}
			if sum := sha256.Sum256(raw[0]); app.Fingerprint(sum[:]) != pinned {
				return fmt.Errorf("certificate fingerprint %s, pinned %s", app.Fingerprint(sum[:]), pinned)
			}
			return nil
		},
	}
}

func (s *server) url(path string) string { return s.scheme + "://" + s.addr + path }

// get fetches path and returns the status and the decoded JSON body.
func (s *server) get(path string) (int, map[string]any) {
	s.t.Helper()
	resp, err := s.client.Get(s.url(path))
	if err != nil {
		s.t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatalf("GET %s: %v", path, err)
	}
	var v map[string]any
	if err := json.Unmarshal(body, &v); err != nil {
		s.t.Fatalf("GET %s: body %q is not a JSON object: %v", path, body, err)
	}
	return resp.StatusCode, v
}

func (s *server) mustBeHealthy() {
	s.t.Helper()
	for _, path := range []string{"/healthz", "/readyz"} {
		status, body := s.get(path)
		if status != http.StatusOK || body["status"] != "ok" {
			s.t.Errorf("GET %s: %d %v, want 200 {status: ok}", path, status, body)
		}
	}
}

// stop cancels serve's context, as Ctrl-C does, and waits for it to return.
func (s *server) stop() error {
	s.stopOnce.Do(func() {
		s.cancel()
		select {
		case s.stopErr = <-s.done:
		case <-time.After(time.Minute):
			s.stopErr = errors.New("serve did not stop within a minute of its context being cancelled")
		}
		if s.client != nil {
			s.client.CloseIdleConnections()
		}
	})
	return s.stopErr
}

func (s *server) mustStop() {
	s.t.Helper()
	if err := s.stop(); err != nil {
		s.t.Fatalf("serve: %v\nstderr:\n%s", err, s.stderr)
	}
}

func TestHelp(t *testing.T) {
	t.Parallel()
	// No database: --help must not need one.
	g := &gateway{t: t, env: map[string]string{"GATEWAY_DATA_DIR": t.TempDir()}}

	for _, flag := range []string{"--help", "-h", "help"} {
		r := g.run(flag)
		if r.err != nil {
			t.Errorf("gateway %s: %v", flag, r.err)
		}
		for _, want := range []string{"usage: gateway", "serve", "merchant create", "merchant deposit", "audit verify", "DATABASE_URL"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("gateway %s does not mention %q:\n%s", flag, want, r.stdout)
			}
		}
	}
	if r := g.run(); r.code() != 2 || !strings.Contains(r.stdout, "usage: gateway") {
		t.Errorf("gateway without a command: exit %d, stdout %q; want 2 and the usage", r.code(), r.stdout)
	}
	if r := g.run("frobnicate"); r.code() != 2 || !strings.Contains(r.err.Error(), "frobnicate") {
		t.Errorf("gateway frobnicate: exit %d, %v; want 2 naming the command", r.code(), r.err)
	}

	for _, tc := range []struct {
		args  []string
		flags []string
	}{
		{[]string{"merchant", "deposit"}, []string{"-shop-no", "-currency", "-amount", "-idempotency-key"}},
		{[]string{"merchant", "create"}, []string{"-name", "-currencies", "-ip-whitelist", "-callback-url"}},
		{[]string{"serve"}, []string{"-addr", "-plain-http"}},
		{[]string{"audit", "verify"}, []string{"-shop-no", "-json"}},
		{[]string{"migrate"}, nil},
	} {
		r := g.run(append(tc.args, "--help")...)
		if r.err != nil {
			t.Errorf("gateway %s --help: %v", strings.Join(tc.args, " "), r.err)
		}
		if !strings.Contains(r.stderr, "usage: gateway "+strings.Join(tc.args, " ")) {
			t.Errorf("gateway %s --help printed no usage:\n%s", strings.Join(tc.args, " "), r.stderr)
		}
		for _, f := range tc.flags {
			if !strings.Contains(r.stderr, f) {
				t.Errorf("gateway %s --help does not list %s:\n%s", strings.Join(tc.args, " "), f, r.stderr)
			}
		}
	}
	if r := g.run("merchant", "deposit", "--no-such-flag"); r.code() != 2 {
		t.Errorf("an unknown flag: exit %d, want 2", r.code())
	}
}

func TestMerchantCommands(t *testing.T) {
	t.Parallel()
	g := newGateway(t)

	if out := g.mustRun("migrate"); !strings.Contains(out, "migrations applied") {
		t.Errorf("migrate printed %q", out)
	}
	c := g.createMerchant("Acme Cards", "usd,JPY,KWD")
	if strings.Join(c.Currencies, ",") != "USD,JPY,KWD" {
		t.Errorf("currencies %v, want [USD JPY KWD]", c.Currencies)
	}
	other := g.createMerchant("Other shop", "EUR")
	if other.ShopNo == c.ShopNo || other.PublicKey == c.PublicKey || other.PrivateKey == c.PrivateKey {
		t.Errorf("two merchants share credentials: %+v %+v", c, other)
	}

	if bal, seq := g.deposit(c.ShopNo, "USD", "1000.00"); bal != "1000.00" || seq != 1 {
		t.Errorf("first deposit: balance %s seq %d, want 1000.00 and 1", bal, seq)
	}
	if bal, _ := g.deposit(c.ShopNo, "usd", "0.1"); bal != "1000.10" {
		t.Errorf("second deposit: balance %s, want 1000.10", bal)
	}
	if bal, _ := g.deposit(c.ShopNo, "JPY", "500"); bal != "500" {
		t.Errorf("JPY deposit: balance %s, want 500", bal)
	}
	if bal, _ := g.deposit(c.ShopNo, "KWD", "1.005"); bal != "1.005" {
		t.Errorf("KWD deposit: balance %s, want 1.005", bal)
	}
	// The same idempotency key deposits once.
	bal1, seq1 := g.deposit(c.ShopNo, "USD", "5", "--idempotency-key", "wire-42")
	bal2, seq2 := g.deposit(c.ShopNo, "USD", "5", "--idempotency-key", "wire-42")
	if bal1 != "1005.10" || seq2 != seq1 {
		t.Errorf("idempotent deposit: balances %s then %s, seqs %d then %d; want 1005.10 and one entry", bal1, bal2, seq1, seq2)
	}
	g.mustFail("", "merchant", "deposit", "--shop-no", c.ShopNo, "--currency", "USD", "--amount", "6", "--idempotency-key", "wire-42")

	// The bank reference: required, checked, and unique per merchant and
	// currency (the replay above under one key was the same deposit).
	g.mustFail("--bank-reference", "merchant", "deposit", "--shop-no", c.ShopNo, "--currency", "USD", "--amount", "1", "--bank-reference", "")
	g.mustFail("--bank-reference", "merchant", "deposit", "--shop-no", c.ShopNo, "--currency", "USD", "--amount", "1", "--bank-reference", "a b")
	if r := g.run("merchant", "deposit", "--shop-no", c.ShopNo, "--currency", "USD", "--amount", "1"); r.code() != 2 ||
		!strings.Contains(r.err.Error(), "--bank-reference") {
		t.Errorf("deposit without a bank reference: exit %d, %v; want 2 naming --bank-reference", r.code(), r.err)
	}
	g.mustFail("bank reference ref-wire-42", "merchant", "deposit", "--shop-no", c.ShopNo, "--currency", "USD", "--amount", "7",
		"--bank-reference", "ref-wire-42")

	// Refusals name the flag at fault and leave the balance alone.
	g.mustFail("--currency", "merchant", "deposit", "--shop-no", c.ShopNo, "--currency", "XYZ", "--amount", "1")
	g.mustFail("--currency", "merchant", "deposit", "--shop-no", c.ShopNo, "--amount", "1")
	g.mustFail("--amount", "merchant", "deposit", "--shop-no", c.ShopNo, "--currency", "USD", "--amount", "1.005")
	g.mustFail("--amount", "merchant", "deposit", "--shop-no", c.ShopNo, "--currency", "JPY", "--amount", "1.5")
	g.mustFail("--amount", "merchant", "deposit", "--shop-no", c.ShopNo, "--currency", "USD", "--amount", "-3")
	g.mustFail("--amount", "merchant", "deposit", "--shop-no", c.ShopNo, "--currency", "USD", "--amount", "0")
	g.mustFail("--amount", "merchant", "deposit", "--shop-no", c.ShopNo, "--currency", "USD", "--amount", "1e300")
	g.mustFail("--amount", "merchant", "deposit", "--shop-no", c.ShopNo, "--currency", "USD", "--amount", "12,50")
	// A currency the merchant does not hold, and a merchant that does not exist.
	g.mustFail("EUR", "merchant", "deposit", "--shop-no", c.ShopNo, "--currency", "EUR", "--amount", "1", "--bank-reference", "ref-eur")
	g.mustFail("not found", "merchant", "deposit", "--shop-no", "SH0000000000", "--currency", "USD", "--amount", "1")
	// Merchant creation refuses bad input by flag too. (An unknown currency
	// is reported as --currency, not --currencies: see the report of
	// ledger.validateMerchantSpec; the code is named in any case.)
	g.mustFail("DOGE", "merchant", "create", "--name", "Bad", "--currencies", "USD,DOGE")
	g.mustFail("--name", "merchant", "create", "--currencies", "USD")
	g.mustFail("--ip-whitelist", "merchant", "create", "--name", "Bad", "--currencies", "USD", "--ip-whitelist", "10.0.0.0/33")

	if bal, _ := g.deposit(c.ShopNo, "USD", "0.01"); bal != "1005.11" {
		t.Errorf("after the refusals: balance %s, want 1005.11", bal)
	}

	out := g.auditOK()
	if !strings.Contains(out, "2 merchants, 6 entries") {
		t.Errorf("audit verify: %q, want 2 merchants and 6 entries", out)
	}
	var rep struct {
		Merchants int64             `json:"merchants"`
		Entries   int64             `json:"entries"`
		Problems  []json.RawMessage `json:"problems"`
	}
	js := g.mustRun("audit", "verify", "--shop-no", c.ShopNo, "--json")
	if err := json.Unmarshal([]byte(js), &rep); err != nil {
		t.Fatalf("audit verify --json printed %q: %v", js, err)
	}
	if rep.Merchants != 1 || rep.Entries != 6 || len(rep.Problems) != 0 {
		t.Errorf("audit verify --shop-no --json: %s", js)
	}
	g.mustFail("not found", "audit", "verify", "--shop-no", "SH0000000000")

	// db url prints the URL in use.
	if out := g.mustRun("db", "url"); strings.TrimSpace(out) != g.env["DATABASE_URL"] {
		t.Errorf("db url printed %q, want DATABASE_URL", out)
	}
}

// TestServe runs serve on a test database: it answers /healthz and /readyz
// over TLS with the certificate it printed, stops when its context ends (as
// on Ctrl-C), and a second serve on the same data keeps the certificate, the
// data key and the merchants.
func TestServe(t *testing.T) {
	t.Parallel()
	g := newGateway(t)

	s := g.serve()
	if s.scheme != "https" {
		t.Errorf("serve listens on %s, want https", s.scheme)
	}
	s.mustBeHealthy()
	if resp, err := s.client.Get(s.url("/no-such-path")); err != nil {
		t.Errorf("GET /no-such-path: %v", err)
	} else {
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET /no-such-path: %d, want 404", resp.StatusCode)
		}
	}
	// Plain HTTP to the TLS port gets a 400 in the envelope, not the API.
	plain := &http.Client{Timeout: 10 * time.Second}
	if resp, err := plain.Get("http://" + s.addr + "/healthz"); err != nil {
		t.Errorf("plain HTTP on the TLS port: %v, want a 400", err)
	} else {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var env map[string]any
		if resp.StatusCode != http.StatusBadRequest || json.Unmarshal(body, &env) != nil || env["code"] != float64(400) {
			t.Errorf("plain HTTP on the TLS port: %d %s, want a 400 envelope", resp.StatusCode, body)
		}
	}
	c := g.createMerchant("Served shop", "USD")
	g.deposit(c.ShopNo, "USD", "12.34")
	s.mustStop()

	key1, err := os.ReadFile(filepath.Join(g.env["GATEWAY_DATA_DIR"], "data.key"))
	if err != nil {
		t.Fatalf("the data key was not kept: %v", err)
	}
	if len(strings.TrimSpace(string(key1))) != 64 {
		t.Errorf("data.key holds %q, want 64 hex digits", key1)
	}

	s2 := g.serve()
	s2.mustBeHealthy()
	if s2.fingerprint != s.fingerprint {
		t.Errorf("the second serve made a new certificate: %s, then %s", s.fingerprint, s2.fingerprint)
	}
	if out := g.auditOK("--shop-no", c.ShopNo); !strings.Contains(out, "1 merchants, 1 entries") {
		t.Errorf("audit verify --shop-no after a restart: %q", out)
	}
	if bal, _ := g.deposit(c.ShopNo, "USD", "1"); bal != "13.34" {
		t.Errorf("balance after a restart %s, want 13.34", bal)
	}
	s2.mustStop()
	key2, _ := os.ReadFile(filepath.Join(g.env["GATEWAY_DATA_DIR"], "data.key"))
	if !bytes.Equal(key1, key2) {
		t.Errorf("the data key changed across restarts")
	}
}

func TestServePlainHTTPAndSettings(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	g.env["GATEWAY_PLAIN_HTTP"] = "true"
	s := g.serve()
	if s.scheme != "http" {
		t.Fatalf("GATEWAY_PLAIN_HTTP=true: serving %s", s.scheme)
	}
	s.mustBeHealthy()
	s.mustStop()

	// The flag wins over the environment.
	s = g.serve("--plain-http=false", "--addr", "127.0.0.1:0")
	if s.scheme != "https" {
		t.Errorf("--plain-http=false: serving %s", s.scheme)
	}
	s.mustStop()

	// Half a TLS configuration, a bad data key and a bad address are refused.
	for _, tc := range []struct {
		name, value, want string
	}{
		{"GATEWAY_TLS_CERT", "/nonexistent/cert.pem", "GATEWAY_TLS_KEY"},
		{"GATEWAY_DATA_KEY", "not-hex", "GATEWAY_DATA_KEY"},
		{"GATEWAY_ADDR", "127.0.0.1:99999", "99999"},
		{"GATEWAY_BODY_IDLE_TIMEOUT", "soon", "GATEWAY_BODY_IDLE_TIMEOUT"},
		{"GATEWAY_CONNS_PER_CLIENT_MAX", "0", "GATEWAY_CONNS_PER_CLIENT_MAX"},
	} {
		bad := &gateway{t: t, env: map[string]string{}}
		for k, v := range g.env {
			bad.env[k] = v
		}
		delete(bad.env, "GATEWAY_PLAIN_HTTP")
		bad.env[tc.name] = tc.value
		r := bad.run("serve")
		if r.err == nil || !strings.Contains(r.err.Error(), tc.want) {
			t.Errorf("serve with %s=%s: %v, want an error naming %s", tc.name, tc.value, r.err, tc.want)
		}
	}
}

// serve applies the request and connection limits of its settings
// (httplimits.Limits, tested in depth in api): a stalled body is a 408 after the
// body's idle time, and one connection more than the per-client bound is
// refused.
func TestServeLimits(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	g.env["GATEWAY_BODY_IDLE_TIMEOUT"] = "300ms"
	g.env["GATEWAY_CONNS_PER_CLIENT_MAX"] = "2"
	s := g.serve()
	cfg := s.client.Transport.(*http.Transport).TLSClientConfig
	dial := func() (*tls.Conn, error) {
		return tls.DialWithDialer(&net.Dialer{Timeout: commandTimeout}, "tcp", s.addr, cfg)
	}
	s.client.CloseIdleConnections() // serve's own check of /healthz held one
	var conns []*tls.Conn
	deadline := time.Now().Add(commandTimeout)
	for len(conns) < 2 {
		c, err := dial()
		if err != nil {
			if time.Now().After(deadline) {
				t.Fatalf("connection %d: %v", len(conns)+1, err)
			}
			time.Sleep(20 * time.Millisecond) // the client's closed ones are not yet released
			continue
		}
		defer c.Close()
		conns = append(conns, c)
	}
	if c, err := dial(); err == nil {
		_ = c.SetReadDeadline(time.Now().Add(commandTimeout))
		_, _ = c.Write([]byte("GET /healthz HTTP/1.1\r\nHost: gateway\r\n\r\n"))
		if _, err := c.Read(make([]byte, 1)); err == nil {
			t.Error("a third connection from 127.0.0.1 was served, the bound is 2")
		}
		c.Close()
	}
	c := conns[0]
	_ = c.SetDeadline(time.Now().Add(commandTimeout))
	if _, err := io.WriteString(c, "POST /shop/card/create HTTP/1.1\r\nHost: gateway\r\nX-Shop-No: SH1\r\n"+
		"X-Public-Key: pk_1\r\nContent-Length: 100\r\n\r\n{\"bin\":"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("a stalled body got no answer: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	// Unauthenticated: the 401 comes once the body has been given its 300ms.
	if resp.StatusCode != http.StatusUnauthorized || !resp.Close {
		t.Errorf("stalled body: %d %s (close %v), want 401 and the connection closed", resp.StatusCode, body, resp.Close)
	}
	s.mustStop()
}

// TestServeEmbedded runs the default set-up: no DATABASE_URL, so serve
// starts its own PostgreSQL in $GATEWAY_DATA_DIR/pg and stops it on the way
// out; the next commands find the data again.
func TestServeEmbedded(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a durable PostgreSQL cluster")
	}
	// Short, and reachable by the postgres user when the test runs as root:
	// the socket path must fit in 107 bytes, and t.TempDir is private.
	dir, err := os.MkdirTemp("", "gw-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if target, err := os.Readlink(filepath.Join(dir, "pg", "cluster")); err == nil {
			_ = os.RemoveAll(target)
		}
		_ = os.RemoveAll(dir)
	})
	g := &gateway{t: t, env: map[string]string{
		"GATEWAY_DATA_DIR":  dir,
		"GATEWAY_ADDR":      "127.0.0.1:0",
		"GATEWAY_LOG_LEVEL": "warn",
		// The internal network API's default port is fixed: tests in
		// parallel each take a free one.
		"GATEWAY_INTERNAL_ADDR": "127.0.0.1:0",
		"GATEWAY_CONSOLE_ADDR":  "127.0.0.1:0",
	}}
	pidFile := filepath.Join(dir, "pg", "data", "postmaster.pid")

	s := g.serve()
	s.mustBeHealthy()
	if _, err := os.Stat(pidFile); err != nil {
		t.Errorf("no running cluster in %s/pg: %v", dir, err)
	}
	s.mustStop()
	if _, err := os.Stat(pidFile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("PostgreSQL still runs after serve stopped (%s: %v)", pidFile, err)
	}

	// With the gateway stopped, the commands start the cluster themselves.
	c := g.createMerchant("Embedded shop", "EUR")
	if bal, _ := g.deposit(c.ShopNo, "EUR", "250.50"); bal != "250.50" {
		t.Errorf("deposit: balance %s, want 250.50", bal)
	}
	if _, err := os.Stat(pidFile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("PostgreSQL still runs after the commands ended (%s: %v)", pidFile, err)
	}

	s2 := g.serve()
	s2.mustBeHealthy()
	if s2.fingerprint != s.fingerprint {
		t.Errorf("the second serve made a new certificate")
	}
	// While serve runs, the commands use its cluster and leave it running.
	if out := g.auditOK("--shop-no", c.ShopNo); !strings.Contains(out, "1 merchants, 1 entries") {
		t.Errorf("audit verify --shop-no: %q", out)
	}
	if bal, _ := g.deposit(c.ShopNo, "EUR", "0.50"); bal != "251.00" {
		t.Errorf("deposit: balance %s, want 251.00", bal)
	}
	s2.mustBeHealthy()
	out := g.mustRun("db", "url")
	if !strings.HasPrefix(out, "postgres://postgres@/gateway?") || !strings.Contains(out, "host=") {
		t.Errorf("db url printed %q", out)
	}
	checkServesAsAppRole(t, strings.TrimSpace(out))
	checkEmbeddedAuditRole(t, g)
	s2.mustStop()
	if _, err := os.Stat(pidFile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("PostgreSQL still runs after serve stopped (%s: %v)", pidFile, err)
	}
}

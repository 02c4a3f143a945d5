package delivery

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"syscall"
	"time"

	"github.com/paygate/gateway/api/client/receiver/signature"
	"github.com/paygate/gateway/internal/callbackurl"
)

// Defaults of the Sender.
const (
	DefaultTimeout          = 5 * time.Second // per attempt: connect, TLS, request, answer
	DefaultResponseBytesMax = 64 << 10        // 64 KiB of response body are read, no more
	UserAgent               = "paygate-callbacks/1"
)

// errorBytesMax bounds Result.Error.
const errorBytesMax = 200

// SenderOptions configure NewSender. The zero value gives the defaults.
type SenderOptions struct {
	// Allow lets the dialer reach addresses refused by default.
	Allow AllowList
	// Timeout of one attempt; DefaultTimeout when ≤ 0.
	Timeout time.Duration
	// ResponseBytesMax bounds the response body read; a longer body is a
	// failure. DefaultResponseBytesMax when ≤ 0.
	ResponseBytesMax int64
	// Now gives X-Timestamp; time.Now when nil.
	Now func() time.Time
	// TLSConfig for https targets (root CAs in tests); nil gives the
	// system roots. TLS 1.2 is the minimum in any case.
	TLSConfig *tls.Config
	// lookup resolves a host name for the dialer; nil is the system
	// resolver. Tests set it to make a name resolve to chosen addresses
	// without DNS.
	lookup func(ctx context.Context, host string) ([]netip.Addr, error)
}

// Sender makes single callback attempts. It is safe for concurrent use.
type Sender struct {
	client  *http.Client
	allow   AllowList
	timeout time.Duration
	bodyMax int64
	now     func() time.Time
}

// Result is the outcome of one attempt.
type Result struct {
	OK       bool          // HTTP 200 and a JSON body whose code is 200
	Status   int           // HTTP status; 0 when no response came
	Error    string        // why it failed, short and without secrets; "" when OK
	Duration time.Duration // wall time of the attempt
}

// NewSender returns a Sender whose transport uses no proxy, never follows
// redirects and refuses, at connect time, every address the allow list
// does not permit.
func NewSender(opts SenderOptions) *Sender {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.ResponseBytesMax <= 0 {
		opts.ResponseBytesMax = DefaultResponseBytesMax
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	var tlsConf *tls.Config
	if opts.TLSConfig != nil {
		tlsConf = opts.TLSConfig.Clone()
	} else {
		tlsConf = &tls.Config{}
	}
	if tlsConf.MinVersion < tls.VersionTLS12 {
		tlsConf.MinVersion = tls.VersionTLS12
	}
	// The connect-time half of the SSRF rules: every resolved address is
	// judged before any is dialled, and the socket's address once more.
	dialer := callbackurl.NewDialer(opts.Allow, &net.Dialer{Timeout: opts.Timeout, KeepAlive: 30 * time.Second}, opts.lookup)
	transport := &http.Transport{
		Proxy:                  nil, // a proxy would be dialled instead of the target, escaping the dialer
		DialContext:            dialer.DialContext,
		TLSClientConfig:        tlsConf,
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    opts.Timeout,
		ResponseHeaderTimeout:  opts.Timeout,
		MaxResponseHeaderBytes: 16 << 10,
		MaxIdleConns:           100,
		MaxIdleConnsPerHost:    2,
		IdleConnTimeout:        90 * time.Second,
	}
	return &Sender{
		client: &http.Client{
			Transport: transport,
			CheckRedirect: func(*http.Request, []*http.Request) error {
				return http.ErrUseLastResponse // a 3xx is the answer, and a failure
			},
		},
		allow:   opts.Allow,
		timeout: opts.Timeout,
		bodyMax: opts.ResponseBytesMax,
		now:     opts.Now,
	}
}

// CloseIdleConnections closes the transport's idle connections.
func (s *Sender) CloseIdleConnections() { s.client.CloseIdleConnections() }

// Send POSTs one attempt of a callback: body as is, Content-Type
// application/json, User-Agent UserAgent, X-Timestamp = unix seconds now,
// X-Sign = the signature with keys[0] and X-Signatures = the signature with
// each key, space-separated (signature.SetHeaders, the format the reference
// receiver verifies), all computed afresh for this attempt. keys are the
// signing keys in force, oldest first: during a roll the replaced key, then
// the new one (docs/callbacks.md, "Rolling the signing key"), so that
// X-Sign stays what receivers already check. It succeeds only on HTTP 200
// with a JSON object whose code is 200 (the number, or the string "200")
// within the time-out; redirects are not followed and at most
// ResponseBytesMax bytes of the answer are read.
func (s *Sender) Send(ctx context.Context, rawURL string, body []byte, keys ...string) Result {
	return s.SendSigned(ctx, rawURL, body, Signing{Keys: keys})
}

// Signing is what an attempt is signed with: the spec's keys (X-Sign,
// X-Signatures), and, when WebhookSecrets is not empty, the Standard
// Webhooks headers for EventID (webhook-id, webhook-timestamp,
// webhook-signature) with each secret, beside them. The dispatcher always
// gives both.
type Signing struct {
	Keys           []string
	EventID        string
	WebhookSecrets []string
}

// SendSigned is Send signing with both schemes (Signing).
func (s *Sender) SendSigned(ctx context.Context, rawURL string, body []byte, sg Signing) Result {
	start := time.Now()
	res := s.send(ctx, rawURL, body, sg)
	res.Duration = time.Since(start)
	if len(res.Error) > errorBytesMax {
		res.Error = res.Error[:errorBytesMax]
	}
	return res
}

func (s *Sender) send(ctx context.Context, rawURL string, body []byte, sg Signing) Result {
	if err := ValidateURL(rawURL, s.allow); err != nil {
		return Result{Error: trimPrefix(err.Error())}
	}
	attemptCtx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(attemptCtx, http.MethodPost, rawURL, bytes.NewReader(body))
	if err != nil {
		return Result{Error: "cannot build the request"}
	}
	ts := strconv.FormatInt(s.now().Unix(), 10)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	if err := signature.SetHeaders(req.Header, body, ts, sg.Keys...); err != nil {
		return Result{Error: "no private key to sign with"} // none, an empty one, or more than a receiver takes
	}
	if len(sg.WebhookSecrets) > 0 {
		// The same timestamp as X-Timestamp: one attempt, one time.
		if err := signature.SetStandardHeaders(req.Header, sg.EventID, ts, body, sg.WebhookSecrets...); err != nil {
			return Result{Error: "no webhook secret to sign with"}
		}
	}

	resp, err := s.client.Do(req)
	if err != nil {
		return Result{Error: s.describe(ctx, attemptCtx, err)}
	}
	defer resp.Body.Close()
	res := Result{Status: resp.StatusCode}
	if resp.StatusCode != http.StatusOK {
		res.Error = "HTTP " + strconv.Itoa(resp.StatusCode)
		if resp.StatusCode >= 300 && resp.StatusCode < 400 {
			res.Error += " (redirects are not followed)"
		}
		return res
	}
	answer, err := io.ReadAll(io.LimitReader(resp.Body, s.bodyMax+1))
	if err != nil {
		res.Error = "reading the answer: " + s.describe(ctx, attemptCtx, err)
		return res
	}
	if int64(len(answer)) > s.bodyMax {
		res.Error = fmt.Sprintf("answer larger than %d bytes", s.bodyMax)
		return res
	}
	if reason := acknowledged(answer); reason != "" {
		res.Error = reason
		return res
	}
	res.OK = true
	return res
}

// acknowledged returns "" when the answer is a JSON object with code 200,
// else why not.
func acknowledged(answer []byte) string {
	var ack struct {
		Code    json.RawMessage `json:"code"`
		Message json.RawMessage `json:"message"`
	}
	if err := json.Unmarshal(answer, &ack); err != nil {
		return "HTTP 200 but the answer is not a JSON object"
	}
	if len(ack.Code) == 0 {
		return "HTTP 200 but the answer has no code"
	}
	if codeIs200(ack.Code) {
		return ""
	}
	reason := "HTTP 200 but code " + printable(string(ack.Code), 24)
	var msg string
	if json.Unmarshal(ack.Message, &msg) == nil && msg != "" {
		reason += ": " + printable(msg, 80)
	}
	return reason
}

func codeIs200(raw json.RawMessage) bool {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s == "200"
	}
	var n json.Number
	if json.Unmarshal(raw, &n) != nil {
		return false
	}
	if i, err := n.Int64(); err == nil {
		return i == 200
	}
	f, err := n.Float64()
	return err == nil && f == 200
}

// printable keeps the printable ASCII of s, up to n bytes.
func printable(s string, n int) string {
	out := make([]byte, 0, min(len(s), n))
	for i := 0; i < len(s) && len(out) < n; i++ {
		if c := s[i]; c >= 0x20 && c < 0x7f {
			out = append(out, c)
		}
	}
	if len(s) > n {
		out = append(out, "..."...)
	}
	return string(out)
}

// describe turns a transport error into a short reason, without the URL
// (which may hold a merchant's token).
func (s *Sender) describe(parent, attempt context.Context, err error) string {
	var blocked *BlockedAddressError
	var refusedName *callbackurl.Error
	var dnsErr *net.DNSError
	var certErr *tls.CertificateVerificationError
	switch {
	case errors.As(err, &blocked):
		return trimPrefix(blocked.Error())
	case errors.As(err, &refusedName): // a name refused by the dialer
		return trimPrefix(refusedName.Error())
	case parent.Err() != nil:
		return "cancelled"
	case errors.Is(attempt.Err(), context.DeadlineExceeded) || isTimeout(err):
		return "timed out after " + s.timeout.String()
	case errors.As(err, &dnsErr):
		if dnsErr.IsNotFound {
			return "DNS: no such host"
		}
		return "DNS lookup failed"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.As(err, &certErr):
		return "TLS certificate not trusted"
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed before the answer"
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return printable(err.Error(), errorBytesMax)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func trimPrefix(s string) string {
	const p = "callbacks: "
	if len(s) >= len(p) && s[:len(p)] == p {
		return s[len(p):]
	}
	return s
}

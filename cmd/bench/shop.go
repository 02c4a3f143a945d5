package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// creds are a merchant's /shop credentials.
type creds struct {
	id         int64
	shopNo     string
	publicKey  string
	privateKey string
}

// shopClient calls the /shop API the way a merchant's server does: the two
// authentication headers, a JSON body, an Idempotency-Key on every POST.
type shopClient struct {
	base string
	hc   *http.Client
}

// envelope is every /shop answer.
type envelope struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

// apiError is an answer other than HTTP 200 with code 200.
type apiError struct {
	status  int
	code    int
	message string
}

func (e *apiError) Error() string {
	return fmt.Sprintf("HTTP %d, code %d: %s", e.status, e.code, e.message)
}

// do sends one request and decodes data into out (when not nil). body is
// the JSON to send (nil for a GET); idemKey is sent when not empty.
func (s *shopClient) do(ctx context.Context, method, path string, q url.Values, c *creds, body []byte, idemKey string, out any) error {
	u := s.base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return err
	}
	req.Header.Set("X-Shop-No", c.shopNo)
	req.Header.Set("X-Public-Key", c.publicKey)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if idemKey != "" {
		req.Header.Set("Idempotency-Key", idemKey)
	}
	return doJSON(s.hc, req, out)
}

// doJSON sends req and decodes the envelope; the body is always read to
// the end so that the connection is reused.
func doJSON(hc *http.Client, req *http.Request, out any) error {
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var env envelope
	if err := json.Unmarshal(raw, &env); err != nil {
		return &apiError{status: resp.StatusCode, message: fmt.Sprintf("not an envelope: %.200s", raw)}
	}
	if resp.StatusCode != http.StatusOK || env.Code != 200 {
		return &apiError{status: resp.StatusCode, code: env.Code, message: env.Message}
	}
	if out != nil && len(env.Data) > 0 {
		return json.Unmarshal(env.Data, out)
	}
	return nil
}

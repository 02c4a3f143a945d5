package api

import (
	"crypto/sha256"
	"strconv"
	"sync"

	"github.com/gin-gonic/gin"

	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

const headerIdempotencyKey = "Idempotency-Key"

// Keys of what readRequest leaves in the gin context.
const (
	bodyKey = "api.body"
	idemKey = "api.idempotency"
)

// inFlight is the set of (merchant, Idempotency-Key) pairs whose request is
// running in this process. A second request with the same key is refused
// (1009) without reaching the ledger, so that a retry racing the original
// can neither run twice nor wait on it. Across processes the ledger's unique
// key does the same job (ECONFLICT idempotency_race, also 1009).
type inFlight struct {
	mu   sync.Mutex
	keys map[string]struct{}
}

func newInFlight() *inFlight { return &inFlight{keys: map[string]struct{}{}} }

// acquire reserves k; false if it is taken.
func (s *inFlight) acquire(k string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, busy := s.keys[k]; busy {
		return false
	}
	s.keys[k] = struct{}{}
	return true
}

func (s *inFlight) release(k string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.keys, k)
}

func (s *inFlight) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.keys)
}

// readRequest is the middleware of every POST under /shop, after
// authentication: it reads the body (413 past the limit), checks the
// Idempotency-Key header (1 to 255 bytes), holds the key in the in-flight
// set for the request's duration, and leaves the raw body and the
// *ledger.Idempotency (nil without a key) for the handler.
func readRequest(set *inFlight) gin.HandlerFunc {
	return func(c *gin.Context) {
		raw, err := readBody(c)
		if err != nil {
			writeError(c, err)
			return
		}
		c.Set(bodyKey, raw)
		keys, present := c.Request.Header[headerIdempotencyKey]
		if !present {
			c.Next()
			return
		}
		if len(keys) != 1 || len(keys[0]) == 0 || len(keys[0]) > ledger.IdempotencyKeyBytesMax || !isPrintableASCII(keys[0]) {
			writeError(c, postings.FieldErrorf(headerIdempotencyKey,
				"header must appear once with 1 to %d printable ASCII characters", ledger.IdempotencyKeyBytesMax))
			return
		}
		key := keys[0]
		m := merchantOf(c)
		slot := strconv.FormatInt(m.ID, 10) + "\x00" + key
		if !set.acquire(slot) {
			writeError(c, &postings.Error{Code: postings.EINPROGRESS,
				Message: "a request with this Idempotency-Key is in progress; retry after it ends"})
			return
		}
		defer set.release(slot)
		c.Set(idemKey, &ledger.Idempotency{Scope: ledger.ScopeShop, Key: key,
			Fingerprint: fingerprint(c.Request.Method, c.Request.URL.Path, raw)})
		c.Next()
	}
}

// fingerprint identifies a request for its idempotency key: the same key
// with another method, path or body is a conflict (1008).
func fingerprint(method, path string, raw []byte) [32]byte {
	h := sha256.New()
	h.Write([]byte(method + "\n" + path + "\n"))
	h.Write(raw)
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// bodyOf and idempotencyOf are what readRequest left.
func bodyOf(c *gin.Context) []byte {
	return c.MustGet(bodyKey).([]byte)
}

func idempotencyOf(c *gin.Context) *ledger.Idempotency {
	v, _ := c.Get(idemKey)
	idem, _ := v.(*ledger.Idempotency)
	return idem
}

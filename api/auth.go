package api

import (
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/paygate/gateway/internal/httpserve"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/postings"
)

// The authentication headers of spec section 5. http.Header canonicalises
// names, so x-shop-no and X-SHOP-NO are the same header.
const (
	headerShopNo    = "X-Shop-No"
	headerPublicKey = "X-Public-Key"
)

// credentialBytesMax bounds the header values handed to the ledger.
const credentialBytesMax = 256

// authenticate resolves the merchant of a /shop request (spec section 5):
// missing header 400, unknown shop or wrong key 401 (one answer for both),
// disabled merchant or caller outside the IP whitelist 403. On success it
// records the time and leaves the merchant in the context.
func authenticate(l Merchants, proxies []netip.Prefix, now func() time.Time) gin.HandlerFunc {
	return func(c *gin.Context) {
		shopNo, err := credentialHeader(c.Request.Header, headerShopNo)
		if err != nil {
			writeError(c, err)
			return
		}
		key, err := credentialHeader(c.Request.Header, headerPublicKey)
		if err != nil {
			writeError(c, err)
			return
		}
		ctx := c.Request.Context()
		m, err := l.Authenticate(ctx, shopNo, key)
		if err != nil {
			writeError(c, err)
			return
		}
		c.Set(shopNoKey, m.ShopNo)
		if m.Status == merchant.Disabled {
			writeError(c, &postings.Error{Code: postings.EFORBIDDEN, Reason: reasonMerchantDisabled,
				Message: "merchant is disabled"})
			return
		}
		ip := httpserve.ClientIP(c.Request, proxies)
		if !ipAllowed(ip, m.IPWhitelist) {
			logger(c).Warn("caller IP not on the whitelist", "client_ip", ip.String())
			writeError(c, &postings.Error{Code: postings.EFORBIDDEN, Reason: reasonIPNotAllowed,
				Message: "caller IP is not on the merchant's whitelist"})
			return
		}
		// The time of the last authentication is a convenience for the
		// profile: failing to record it must not fail the request.
		if err := l.TouchAuthenticated(ctx, m.ID, now()); err != nil {
			logger(c).Warn("recording the authentication time", "error", err.Error())
		}
		c.Set(merchantKey, m)
		c.Next()
	}
}

// credentialHeader reads one authentication header: missing, empty,
// repeated or absurdly long is 400 naming the header. A credential that is
// too long for any shop is refused before it reaches the database; a
// repeated one is refused because a proxy in front may believe the other
// value than the gateway does.
func credentialHeader(h http.Header, name string) (string, error) {
	if len(h.Values(name)) > 1 {
		return "", postings.FieldErrorf(name, "header must appear once")
	}
	v := strings.TrimSpace(h.Get(name))
	if v == "" {
		return "", postings.FieldErrorf(name, "header is required")
	}
	if len(v) > credentialBytesMax {
		return "", postings.FieldErrorf(name, "header is longer than %d bytes", credentialBytesMax)
	}
	if !isPrintableASCII(v) {
		// No shop number or key has such bytes: the credentials identify no
		// merchant, and the answer is the one of a wrong key.
		return "", postings.Errorf(postings.EUNAUTHENTICATED, "malformed credentials")
	}
	return v, nil
}

// isPrintableASCII reports whether s has only bytes 0x20 to 0x7e: what a
// credential or an idempotency key may hold (the database stores UTF-8
// text, and these values are never meant to be anything else).
func isPrintableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// merchantOf is the authenticated merchant of a /shop request.
func merchantOf(c *gin.Context) *merchant.Merchant {
	return c.MustGet(merchantKey).(*merchant.Merchant)
}

// ipAllowed checks a client address against a merchant's whitelist of
// canonical CIDR prefixes; an empty whitelist admits every address. An
// entry that does not parse admits nothing (the ledger stores them
// canonical, so that does not happen).
func ipAllowed(a netip.Addr, whitelist []string) bool {
	if len(whitelist) == 0 {
		return true
	}
	if !a.IsValid() {
		return false
	}
	for _, s := range whitelist {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			if one, err := netip.ParseAddr(s); err == nil && one.Unmap() == a {
				return true
			}
			continue
		}
		if p.Contains(a) {
			return true
		}
	}
	return false
}

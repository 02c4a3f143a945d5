package client

import (
	"fmt"
	"net/url"
	"strings"
)

// parseBaseURL checks Config.BaseURL when the client is made, not at the
// first call: the gateway serves only HTTPS (a plain-HTTP request is
// refused with 400), and the client adds the /shop/… paths itself, so a
// base ending in /shop would call /shop/shop/…. A path prefix is kept (a
// gateway behind a proxy at https://host/paygate).
func parseBaseURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Host == "" || u.Opaque != "":
		return "", fmt.Errorf("client: BaseURL %.80q is not a URL such as https://127.0.0.1:8443", raw)
	case u.Scheme != "https":
		return "", fmt.Errorf("client: BaseURL %.80q: the gateway serves only https:// (a plain-HTTP request is refused)", raw)
	case u.User != nil:
		return "", fmt.Errorf("client: BaseURL %.80q: must not hold user information; the credentials are ShopNo and PublicKey", raw)
	case u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(raw, "?") || strings.HasSuffix(raw, "#"):
		return "", fmt.Errorf("client: BaseURL %.80q: must not hold a query or a fragment", raw)
	}
	path := strings.TrimRight(u.EscapedPath(), "/")
	if path == "/shop" || strings.HasSuffix(path, "/shop") {
		return "", fmt.Errorf("client: BaseURL %.80q ends in /shop: give the gateway's address (https://host:port); the client adds /shop/… itself", raw)
	}
	return "https://" + u.Host + path, nil
}

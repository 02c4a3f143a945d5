package house

import (
	"errors"
	"net/http"
	"strings"

	"github.com/paygate/gateway/internal/callbackurl"
	"github.com/paygate/gateway/internal/console/host"
)

// A merchant's default callback URL on the operator's merchant page: the
// CLI's merchant callback-url, checked as the CLI and the API check it
// (callbackurl.Validate with the gateway's allow list, so a URL the sender
// would refuse is refused when it is typed, not when a callback is due) and
// stored by the same ledger command. Empty removes it, as the CLI's --url ""
// does.

func (s *pages) merchantCallbackURL(w http.ResponseWriter, r *http.Request, u *host.User) {
	m := s.operatorMerchant(w, r)
	if m == nil {
		return
	}
	raw := r.PostFormValue("callbackUrl")
	value := map[string]string{"callbackUrl": raw}
	// Spaces around a pasted URL are the form's, not the URL's (Validate
	// refuses a space inside one).
	url := strings.TrimSpace(raw)
	if url != "" {
		if err := callbackurl.Validate(url, s.d.CallbackAllow); err != nil {
			reason := "is not a valid callback URL"
			var ue *callbackurl.Error
			if errors.As(err, &ue) {
				reason = ue.Reason
			}
			s.refuse(w, r, m, "callback_url", "callbackUrl: "+reason, value)
			return
		}
	}
	detail := url
	if url == "" {
		detail = "removed"
	}
	a, ok := s.h.Begin(w, r, m.ID, "merchant.callback_url", m.ShopNo, detail) // audit_intent.go
	if !ok {
		return
	}
	err := s.d.Merchants.SetCallbackURL(r.Context(), m.ID, url)
	a.Finish(err, 0, "", "")
	if err != nil {
		s.commandError(w, r, m, "callback_url", value, err)
		return
	}
	s.changed(w, r, m, "callback_url")
}

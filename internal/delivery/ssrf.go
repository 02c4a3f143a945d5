package delivery

import "github.com/paygate/gateway/internal/callbackurl"

// The SSRF rules live in package callbackurl, shared with the API and the
// operator's commands that take a URL; these names keep the Sender's
// options and its callers as they were.

// URLBytesMax bounds a callback URL.
const URLBytesMax = callbackurl.BytesMax

// ErrInvalidURL is wrapped by every error of ValidateURL.
var ErrInvalidURL = callbackurl.ErrInvalid

// AllowList lets callbacks reach addresses that are refused by default
// (callbackurl.AllowList).
type AllowList = callbackurl.AllowList

// BlockedAddressError is the refusal of a target address
// (callbackurl.BlockedAddressError).
type BlockedAddressError = callbackurl.BlockedAddressError

// ValidateURL is callbackurl.Validate: the Sender checks every URL again
// before an attempt, with the same rules as at submission.
func ValidateURL(raw string, allow AllowList) error { return callbackurl.Validate(raw, allow) }

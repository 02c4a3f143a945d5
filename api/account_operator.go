package api

import (
	"github.com/paygate/gateway/api/views"
	"github.com/paygate/gateway/internal/cards"
)

// AccountView is the profile GET /shop/account answers, for the operator's
// commands (`gateway merchant show` and the commands that change a
// merchant), so that the operator reads the same field names as the
// merchant (docs/api.md, "Field names").
type AccountView = views.Account

// NewAccountView is the answer of GET /shop/account for p.
func NewAccountView(p *cards.Profile) AccountView { return views.NewAccount(p) }

package api

import (
	"github.com/gin-gonic/gin"

	"github.com/paygate/gateway/api/views"
)

// handleAccount answers GET /shop/account: the merchant's profile.
func handleAccount(l Accounts) gin.HandlerFunc {
	return func(c *gin.Context) {
		p, err := l.Profile(c.Request.Context(), merchantOf(c).ID)
		writeResult(c, views.NewAccount, p, err)
	}
}

// handleBINList answers GET /shop/card/bin/list: the BIN entries open to the
// merchant, in the ledger's order (network, BIN, currency).
func handleBINList(l Accounts) gin.HandlerFunc {
	return func(c *gin.Context) {
		bins, err := l.MerchantBINs(c.Request.Context(), merchantOf(c).ID)
		writeResult(c, views.NewBINs, bins, err)
	}
}

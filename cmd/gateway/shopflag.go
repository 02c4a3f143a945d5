package main

import (
	"context"
	"fmt"

	"github.com/paygate/gateway/internal/app"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/postings"
)

// merchantOfFlag resolves the --shop-no of the checking commands (audit
// verify, audit statement). An unknown shop number is the caller's
// mistake, a usage error (exit status 2), not something the check found in
// the books (1): a script that pages finance on 1 must not page it for a
// typo (issue 29, finding 6).
func merchantOfFlag(ctx context.Context, l *app.Services, shopNo string) (*merchant.Merchant, error) {
	m, err := l.MerchantByShopNo(ctx, shopNo)
	if err != nil && postings.AsError(err).Code == postings.ENOTFOUND {
		return nil, usageError(fmt.Sprintf("--shop-no %q: merchant not found", shopNo))
	}
	if err != nil {
		return nil, cliError(err)
	}
	return m, nil
}

package main

import (
	"context"
	"time"

	"github.com/paygate/gateway/internal/app"
	"github.com/paygate/gateway/internal/database"
	"github.com/paygate/gateway/internal/merchant"
)

// openMerchant opens what a command about one merchant needs, written
// once for audit statement, report balance and audit close: the store and
// a ledger, and the merchant of --shop-no (merchantOfFlag: an unknown one
// is a usage error). reading: a reading ledger (openReconcileLedger: long
// statements, no data key) whose reads go where the operator's go
// (attachReadRoute); else the writing one (openLedger). done closes what
// was opened, the last first.
func openMerchant(ctx context.Context, e *env, shopNo string, reading bool) (*app.Services, *merchant.Merchant, func(), error) {
	open, closeReads := openLedger, func() {}
	if reading {
		open = openReconcileLedger
	}
	s, l, err := open(ctx, e)
	if err != nil {
		return nil, nil, nil, err
	}
	done := func() {
		closeReads()
		l.Close()
		s.Close()
	}
	if reading {
		if closeReads, err = attachReadRoute(e, l.Ledger, database.DBOptions{ConnsMax: 4, StatementTimeout: reconcileStatementTimeout},
			readWaitOperatorMs*time.Millisecond); err != nil {
			closeReads = func() {}
			done()
			return nil, nil, nil, err
		}
	}
	m, err := merchantOfFlag(ctx, l, shopNo)
	if err != nil {
		done()
		return nil, nil, nil, err
	}
	return l, m, done, nil
}

// reportOf hands a reconciliation's report on as a reconcileReport: no
// report (a nil interface, not a nil pointer) when err is set.
func reportOf[R reconcileReport](rep R, err error) (reconcileReport, error) {
	if err != nil {
		return nil, err
	}
	return rep, nil
}

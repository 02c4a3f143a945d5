package main

import (
	"context"
	"fmt"
	"time"

	"github.com/paygate/gateway/api/client"
)

// `gateway trigger remittance.status` (docs/callbacks.md, "Local
// development"): a remittance of the test merchant's own, to a sandbox
// beneficiary of the corridor of --currency, moved through its whole
// lifecycle — the lifecycle worker screens it and puts it IN_FLIGHT (each
// step a remittance.status event), where a test merchant's remittance waits
// for its sandbox, and the sandbox's rail settles it (the last event,
// SETTLED). Nothing is made outside the merchant's test account.

// triggerRemitAmount is what the remittance sends (plus the corridor's fee).
var triggerRemitAmount = client.MustDecimal("1.00")

// triggerRemitPoll is how often the remittance's status is read while the
// lifecycle worker screens it (GATEWAY_REMIT_SCREENING_DELAY, 2 s by
// default); triggerRemitWait bounds the wait.
const (
	triggerRemitPoll = 200 * time.Millisecond
	triggerRemitWait = 2 * time.Minute
)

// sandboxBeneficiaries are the beneficiaries trigger sends to, by currency:
// made-up accounts of well-formed numbers (an IBAN with its check digits,
// an ABA routing number with its checksum) that pass the corridor's
// checks and screening, in the corridors every gateway has.
var sandboxBeneficiaries = map[string]client.Beneficiary{
	"USD": {Name: "Sandbox Supplies Inc", Country: "US", AccountNo: "123456789",
		Extra: map[string]string{"routing_number": "021000021", "account_type": "CHECKING"}},
	"EUR": {Name: "Sandbox Lieferant GmbH", Country: "DE", BankSwift: "COBADEFFXXX", AccountNo: "DE89370400440532013000"},
}

// remittance makes, moves and settles one remittance of t.currency.
func (t *trigger) remittance(ctx context.Context) error {
	ben, ok := sandboxBeneficiaries[t.currency]
	if !ok {
		return fmt.Errorf("no sandbox beneficiary in %s: use --currency USD or EUR", t.currency)
	}
	corridor, err := t.c.RemittanceFields(ctx, ben.Country, t.currency)
	if err != nil {
		return err
	}
	req := client.CreateRemittanceRequest{PayerID: "gateway-trigger", Beneficiary: ben, Amount: triggerRemitAmount, Currency: t.currency}
	if corridor.PurposeRequired && len(corridor.PurposeCodes) > 0 {
		req.Purpose = corridor.PurposeCodes[0].Code
	}
	rm, err := t.c.CreateRemittance(ctx, req)
	if err != nil {
		return err
	}
	t.made = append(t.made, rm.TxID)
	if err := t.waitInFlight(ctx, rm.TxID); err != nil {
		return err
	}
	_, err = t.c.SandboxSettleRemittance(ctx, client.SandboxSettleRequest{TxID: rm.TxID})
	return err
}

// waitInFlight reads the remittance until the lifecycle worker has put it
// IN_FLIGHT; a screening that rejects it ends the trigger.
func (t *trigger) waitInFlight(ctx context.Context, txID string) error {
	ctx, cancel := context.WithTimeout(ctx, triggerRemitWait)
	defer cancel()
	tick := time.NewTicker(triggerRemitPoll)
	defer tick.Stop()
	for {
		q, err := t.c.Remittance(ctx, txID)
		if err != nil {
			return err
		}
		switch q.Status {
		case "IN_FLIGHT":
			return nil
		case "SETTLED", "RETURNED", "REJECTED":
			return fmt.Errorf("remittance %s ended %s %s before it was in flight", txID, q.Status, q.Reason)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("remittance %s still %s after %s: is the gateway's lifecycle worker running?", txID, q.Status, triggerRemitWait)
		case <-tick.C:
		}
	}
}

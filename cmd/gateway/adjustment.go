package main

// gateway adjustment propose|approve|reject|list: corrections without
// edits (docs/finance.md, "Corrections"). The CLI acts as a named house
// operator (--as LOGIN, a console user of the house): maker–checker
// compares users, so the proposer cannot approve from the CLI either, and
// each step is a row of the console's audit trail.

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/paygate/gateway/internal/adjustment"
	"github.com/paygate/gateway/internal/app"
	"github.com/paygate/gateway/internal/console"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/postings"
)

// withHouseUser runs fn for the merchant as the house operator --as names.
func withHouseUser(ctx context.Context, e *env, name, summary string, args []string, define func(fs *flag.FlagSet),
	fn func(l *app.Services, m *merchant.Merchant, who adjustment.Actor) error) error {
	var as *string
	return withMerchant(ctx, e, name, summary, args, func(fs *flag.FlagSet) {
		as = fs.String("as", "", "the house operator acting (a console login of the house; required)")
		if define != nil {
			define(fs)
		}
	}, func(l *app.Services, m *merchant.Merchant) error {
		if *as == "" {
			return usageError("--as is required: the house operator acting")
		}
		id, err := console.HouseUser(ctx, l.DB(), *as)
		if err != nil {
			return err
		}
		return fn(l, m, adjustment.Actor{UserID: id, Login: *as})
	})
}

// auditStep records a CLI step in the console's trail, then returns err.
func auditStep(ctx context.Context, l *app.Services, who adjustment.Actor, m *merchant.Merchant, action string, id int64, detail string, err error) error {
	outcome := "ok"
	if err != nil {
		outcome, detail = "refused", detail+": "+postings.AsError(err).Message
	}
	target := m.ShopNo
	if id != 0 {
		target += " adjustment " + strconv.FormatInt(id, 10)
	}
	if aerr := console.AuditCLI(ctx, l.DB(), who.UserID, who.Login, m.ID, action, target, detail, outcome); aerr != nil && err == nil {
		return aerr
	}
	return err
}

func cmdAdjustmentPropose(ctx context.Context, e *env, args []string) error {
	var reverses *int64
	var house, direction, amount, currency, reason, reference *string
	return withHouseUser(ctx, e, "adjustment propose", "Propose a correction: the reversal of an entry (--reverses SEQ) or a free\n"+
		"adjustment between the merchant's funding account and a house account. Another house user approves it.", args,
		func(fs *flag.FlagSet) {
			reverses = fs.Int64("reverses", 0, "the merchant's entry (seq) to reverse exactly")
			house = fs.String("house-account", "", "free adjustment: world or fee_revenue")
			direction = fs.String("direction", "", "free adjustment: credit (house → funding) or debit (funding → house)")
			amount = fs.String("amount", "", "free adjustment: decimal amount in --currency")
			currency = fs.String("currency", "", "free adjustment: ISO 4217 code")
			reason = fs.String("reason", "", "why (3 to 500 characters; required)")
			reference = fs.String("reference", "", "the ticket or document it answers (1 to 64 characters; required)")
		},
		func(l *app.Services, m *merchant.Merchant, who adjustment.Actor) error {
			in := adjustment.ProposeInput{Merchant: m.ID, Reverses: *reverses, House: *house, Direction: *direction,
				Currency: strings.ToUpper(*currency), Reason: *reason, Reference: *reference}
			if *amount != "" {
				cur, err := postings.LookupCurrency(in.Currency)
				if err != nil {
					return usageError("--currency: " + postings.AsError(err).Message)
				}
				if in.Amount, err = postings.ParseAmount(*amount, cur); err != nil {
					return usageError("--amount: " + postings.AsError(err).Message)
				}
			}
			p, err := adjustment.New(l.Ledger).Propose(ctx, who, in)
			var id int64
			if p != nil {
				id = p.ID
			}
			if err := auditStep(ctx, l, who, m, "adjustment.propose", id, "reason "+*reason+", reference "+*reference, err); err != nil {
				return err
			}
			return printJSON(e, p)
		})
}

// cmdAdjustmentDecide is approve or reject.
func cmdAdjustmentDecide(approve bool) func(ctx context.Context, e *env, args []string) error {
	name, action, summary := "adjustment reject", "adjustment.reject", "Reject a proposed adjustment (not your own): nothing moves."
	if approve {
		name, action, summary = "adjustment approve", "adjustment.approve", "Approve a proposed adjustment (not your own): posts its ADJUSTMENT entry, once."
	}
	return func(ctx context.Context, e *env, args []string) error {
		var id *int64
		return withHouseUser(ctx, e, name, summary, args, func(fs *flag.FlagSet) {
			id = fs.Int64("id", 0, "the adjustment's id (required)")
		}, func(l *app.Services, m *merchant.Merchant, who adjustment.Actor) error {
			if *id <= 0 {
				return usageError("--id is required")
			}
			s := adjustment.New(l.Ledger)
			decide := s.Reject
			if approve {
				decide = s.Approve
			}
			p, err := decide(ctx, who, m.ID, *id)
			detail := ""
			if p != nil && p.EntrySeq != 0 {
				detail = "entry seq " + strconv.FormatInt(p.EntrySeq, 10)
			}
			if err := auditStep(ctx, l, who, m, action, *id, detail, err); err != nil {
				return err
			}
			return printJSON(e, p)
		})
	}
}

func cmdAdjustmentList(ctx context.Context, e *env, args []string) error {
	var limit *int
	var before *int64
	return withMerchant(ctx, e, "adjustment list", "List a merchant's adjustments, newest first, with their status (EXPIRED: undecided in time); "+
		"--before the last id listed gives the next page.", args,
		func(fs *flag.FlagSet) {
			limit = fs.Int("limit", 100, "at most this many (1 to 500)")
			before = fs.Int64("before", 0, "only adjustments with a smaller id: the last id of the page before (0: the newest)")
		},
		func(l *app.Services, m *merchant.Merchant) error {
			if *limit < 1 || *limit > adjustment.ListMax {
				return usageError(fmt.Sprintf("--limit must be from 1 to %d", adjustment.ListMax))
			}
			if *before < 0 {
				return usageError("--before must be an adjustment id (1 or more), or 0 for the newest")
			}
			ps, err := adjustment.New(l.Ledger).List(ctx, m.ID, *before, *limit)
			if err != nil {
				return err
			}
			return printJSON(e, ps)
		})
}

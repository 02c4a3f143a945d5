package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/paygate/gateway/internal/app"
	"github.com/paygate/gateway/internal/delivery"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/postings"
)

// cmdCallbacksList lists a merchant's events with their delivery status.
func cmdCallbacksList(ctx context.Context, e *env, args []string) error {
	var status, order *string
	var limit *int
	var asJSON *bool
	return withMerchant(ctx, e, "callbacks list",
		"List a merchant's events, newest first unless --order asc, with delivery status (PENDING, DELIVERED, FAILED, NOT_SENT), attempts and the last error.", args,
		func(fs *flag.FlagSet) {
			status = fs.String("status", "", "only this status: PENDING, DELIVERED, FAILED or NOT_SENT")
			order = fs.String("order", string(delivery.OrderDesc), "desc (newest first) or asc (oldest first), as the API's order parameter")
			limit = fs.Int("limit", 50, fmt.Sprintf("at most this many, 1 to %d", delivery.DeliveriesPageMax))
			asJSON = fs.Bool("json", false, "print JSON")
		},
		func(l *app.Services, m *merchant.Merchant) error {
			if *limit < 1 || *limit > delivery.DeliveriesPageMax {
				// Refused, not silently clamped: the operator asked for
				// something else than they would get.
				return postings.FieldErrorf("limit", "must be from 1 to %d", delivery.DeliveriesPageMax)
			}
			o, err := delivery.ParseOrder("order", *order, delivery.OrderDesc)
			if err != nil {
				return err
			}
			list, err := l.Deliveries.DeliveriesInOrder(ctx, m.ID, strings.ToUpper(*status), o, *limit)
			if err != nil {
				return err
			}
			if *asJSON {
				return printJSON(e, list)
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "SEQ\tEVENT\tTYPE\tSUBJECT\tSTATUS\tATTEMPTS\tNEXT\tLAST ERROR")
			for _, d := range list {
				next, lastErr := "", ""
				if d.NextAttemptAt != nil {
					next = d.NextAttemptAt.UTC().Format("2006-01-02T15:04:05Z")
				}
				if d.LastError != nil {
					lastErr = *d.LastError
				}
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", d.EventSeq, d.EventID, d.EventType, d.Subject,
					d.Status, d.Attempts, next, lastErr)
			}
			return tw.Flush()
		})
}

// cmdCallbacksReplay sends one event, or every failed one, again with a new
// 24-hour window and the same event_id.
func cmdCallbacksReplay(ctx context.Context, e *env, args []string) error {
	var eventID *string
	var failed *bool
	return withMerchant(ctx, e, "callbacks replay",
		"Send an event again (same event_id, new 24-hour window), or every failed one with --failed.", args,
		func(fs *flag.FlagSet) {
			eventID = fs.String("event-id", "", "the event to send again")
			failed = fs.Bool("failed", false, "replay every FAILED delivery of the merchant")
		},
		func(l *app.Services, m *merchant.Merchant) error {
			switch {
			case *failed == (*eventID != ""):
				return usageError("give exactly one of --event-id and --failed")
			case *failed:
				// The store's batches (what the API's replay does once),
				// until no failed delivery remains.
				var n int64
				for {
					r, err := l.Deliveries.ReplayFailed(ctx, m.ID, delivery.FailedRange{})
					if err != nil {
						return err
					}
					n += r.Replayed
					if !r.More || r.Replayed == 0 {
						break
					}
				}
				return printJSON(e, map[string]any{"shopNo": m.ShopNo, "replayed": n})
			default:
				if _, err := l.Deliveries.ReplayEvent(ctx, m.ID, *eventID); err != nil {
					return err
				}
				return printJSON(e, map[string]any{"shopNo": m.ShopNo, "replayed": 1, "eventId": *eventID})
			}
		})
}

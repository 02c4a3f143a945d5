package delivery

import (
	"context"

	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/paygate/gateway/ledger"
)

// An event's status over its endpoints (docs/api.md, "Webhooks"): an event
// goes to several endpoints, so its listed status is no longer endpoint
// one's alone. The top-level status is the worst (FAILED, then PENDING,
// then DELIVERED) over its deliveries to the endpoints that are enabled and
// live now — those the merchant still listens on —, else over all its
// deliveries (every endpoint it went to was disabled or deleted since), and
// NOT_SENT when it has none. For a merchant with endpoint one alone it is
// endpoint one's status, as before endpoints existed. The other top-level
// fields (url, attempts, …) stay endpoint one's delivery; each delivery is
// listed with the event (DeliveryInfo.Deliveries).

// eventJoinSQL joins an event e to endpoint one's delivery d (the
// top-level fields) and to agg, its status over the endpoints: one probe
// of the deliveries' key per event.
const eventJoinSQL = `left join deliveries d on d.merchant_id = e.merchant_id and d.event_seq = e.event_seq and d.endpoint_no = 1
	left join lateral (
		select x.status from deliveries x
		join webhook_endpoints w on w.merchant_id = x.merchant_id and w.endpoint_no = x.endpoint_no
		where x.merchant_id = e.merchant_id and x.event_seq = e.event_seq
		order by (w.enabled and w.deleted_at is null) desc,
		         case x.status when 'FAILED' then 0 when 'PENDING' then 1 else 2 end
		limit 1) agg on true`

// eventStatusSQL is an event's status (eventJoinSQL's agg).
const eventStatusSQL = `coalesce(agg.status, 'NOT_SENT')`

// complete fills what the listing's statement does not read: the shop
// number and each event's deliveries by endpoint.
func (s *Store) complete(ctx context.Context, merchantID int64, list []*DeliveryInfo) error {
	if err := s.withShop(ctx, merchantID, list); err != nil {
		return err
	}
	return s.withDeliveries(ctx, merchantID, list)
}

// withDeliveries reads the deliveries of the listed events, endpoint by
// endpoint (without their attempts: EventDetail has those), in one
// statement for the page.
func (s *Store) withDeliveries(ctx context.Context, merchantID int64, list []*DeliveryInfo) error {
	if len(list) == 0 {
		return nil
	}
	seqs := make([]int64, len(list))
	at := make(map[int64]*DeliveryInfo, len(list))
	for i, d := range list {
		seqs[i], at[d.EventSeq] = d.EventSeq, d
		d.Deliveries = []EndpointDelivery{}
	}
	var rows []struct {
		EndpointDelivery
		EventSeq int64 `bun:"event_seq"`
	}
	err := s.l.DB().NewRaw(`select d.event_seq, `+endpointDeliveryColumns+`
		from deliveries d join webhook_endpoints w on w.merchant_id = d.merchant_id and w.endpoint_no = d.endpoint_no
		where d.merchant_id = ? and d.event_seq = any (?::bigint[]) order by d.event_seq, d.endpoint_no`,
		merchantID, pgdialect.Array(seqs)).Scan(ctx, &rows)
	if err != nil {
		return ledger.MapError(err)
	}
	for _, r := range rows {
		if d := at[r.EventSeq]; d != nil {
			d.Deliveries = append(d.Deliveries, r.EndpointDelivery)
		}
	}
	return nil
}

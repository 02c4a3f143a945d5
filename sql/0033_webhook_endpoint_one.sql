-- Endpoint one behaves like every other webhook endpoint (issue 32): it may
-- be disabled and may select event types (docs/callbacks.md, "Webhook
-- endpoints"). Its deliveries are still written by the ledger's outbox with
-- each event, exactly as the spec's callbacks always were, so a merchant who
-- never touches its endpoints sees nothing change. When endpoint one is
-- disabled or selects types, the trigger below removes, in the inserting
-- statement itself, the outbox's rows that would go to the merchant's
-- default URL for an event it does not take. An event that names its own
-- callback_url (the spec's per-object URL, given by the request) is always
-- sent there: the request asked for it explicitly.

alter table webhook_endpoints drop constraint webhook_endpoints_one_check,
    add constraint webhook_endpoints_one_check check ((endpoint_no = 1) = (url is null)
        and (endpoint_no = 1) = (secret_sealed is null) and (endpoint_no = 1) = (rolled_at is null)
        and (endpoint_no > 1 or deleted_at is null));

-- Statement-level, like the fan-out on events: one join per insert of
-- deliveries, and a merchant whose endpoint one takes everything (every
-- merchant until it changes that) matches no row of the join.
create function webhook_endpoint_one_filter() returns trigger language plpgsql as $$
begin
    delete from deliveries d
    using new_deliveries n
    join webhook_endpoints w on w.merchant_id = n.merchant_id and w.endpoint_no = 1
         and (not w.enabled or w.event_types is not null)
    join events e on e.merchant_id = n.merchant_id and e.event_seq = n.event_seq
    where n.endpoint_no = 1 and e.callback_url is null
      and not (w.enabled and e.event_type = any (w.event_types))
      and d.merchant_id = n.merchant_id and d.event_seq = n.event_seq and d.endpoint_no = 1;
    return null;
end $$;
create trigger deliveries_webhook_endpoint_one after insert on deliveries
    referencing new table as new_deliveries
    for each statement execute function webhook_endpoint_one_filter();

-- Webhook endpoints (issue 32 point 2; docs/callbacks.md, "Webhook
-- endpoints"): up to 16 per merchant, each with its URL, the event types
-- it receives (null: all), its own Standard Webhooks secret and an enabled
-- flag. Endpoint one is the merchant's default URL: its URL stays
-- merchants.callback_url and its secret the webhook_secrets row, so that
-- nothing existing changes; every merchant has it (made here for existing
-- merchants, by a trigger for new ones). The other endpoints keep their URL
-- and sealed secrets here. A deleted endpoint keeps its row (deleted_at)
-- so that its past deliveries still name it, and its number is never given
-- again.

create table webhook_endpoints (
    merchant_id        bigint      not null references merchants (id),
    endpoint_no        integer     not null constraint webhook_endpoints_no_check check (endpoint_no >= 1),
    endpoint_id        text        not null constraint webhook_endpoints_id_key unique
                                   constraint webhook_endpoints_id_check check (endpoint_id ~ '^we_[0-9a-z]{24}$'),
    url                text        constraint webhook_endpoints_url_check check (length(url) between 1 and 2048),
    event_types        text[]      constraint webhook_endpoints_types_check check (cardinality(event_types) between 1 and 64),
    enabled            boolean     not null default true,
    description        text        not null default '' constraint webhook_endpoints_description_check check (length(description) <= 200),
    secret_sealed      bytea,
    secret_prev_sealed bytea,
    secret_prev_until  timestamptz,
    rolled_at          timestamptz,
    created_at         timestamptz not null,
    deleted_at         timestamptz,
    constraint webhook_endpoints_pkey primary key (merchant_id, endpoint_no),
    -- Endpoint one's URL and secret live where they always have.
    constraint webhook_endpoints_one_check check ((endpoint_no = 1) = (url is null)
        and (endpoint_no = 1) = (secret_sealed is null) and (endpoint_no = 1) = (rolled_at is null)
        and (endpoint_no > 1 or (event_types is null and enabled and deleted_at is null))),
    constraint webhook_endpoints_prev_pair_check check ((secret_prev_sealed is null) = (secret_prev_until is null))
);

-- Endpoint one of every merchant (the id's 24 characters: hex of a random
-- digest, a subset of the alphabet).
insert into webhook_endpoints (merchant_id, endpoint_no, endpoint_id, created_at)
select id, 1, 'we_' || substr(md5(random()::text || id::text || clock_timestamp()::text), 1, 24), now() from merchants;

create function webhook_endpoints_default() returns trigger language plpgsql as $$
begin
    insert into webhook_endpoints (merchant_id, endpoint_no, endpoint_id, created_at)
    values (new.id, 1, 'we_' || substr(md5(random()::text || new.id::text || clock_timestamp()::text), 1, 24), now());
    return null;
end $$;
create trigger merchants_webhook_endpoint_one after insert on merchants
    for each row execute function webhook_endpoints_default();

-- Deliveries and attempts are per endpoint. The outbox's row (written by
-- the ledger with the event) is endpoint one's, hence the default.
alter table deliveries add column endpoint_no integer not null default 1;
alter table deliveries drop constraint deliveries_pkey,
    add constraint deliveries_pkey primary key (merchant_id, event_seq, endpoint_no);
drop index deliveries_subject_idx;
create index deliveries_subject_idx on deliveries (merchant_id, endpoint_no, subject, event_seq) where status = 'PENDING';
alter table delivery_attempts add column endpoint_no integer not null default 1;
drop index delivery_attempts_delivery_idx;
create index delivery_attempts_delivery_idx on delivery_attempts (merchant_id, event_seq, endpoint_no, id);

-- The other endpoints' deliveries are written with the event, in the same
-- transaction, by this statement-level trigger: one join per insert of
-- events (the ledger inserts a batch's events in one statement), so a
-- merchant with only endpoint one pays one index probe per batch.
create function webhook_endpoints_fan_out() returns trigger language plpgsql as $$
begin
    insert into deliveries (merchant_id, event_seq, endpoint_no, subject, url, status, attempts, window_start, next_attempt_at)
    select n.merchant_id, n.event_seq, w.endpoint_no, n.subject, w.url, 'PENDING', 0, n.created_at, n.created_at
    from new_events n
    join webhook_endpoints w on w.merchant_id = n.merchant_id
    where w.endpoint_no > 1 and w.enabled and w.deleted_at is null
      and (w.event_types is null or n.event_type = any (w.event_types));
    return null;
end $$;
create trigger events_webhook_endpoints after insert on events
    referencing new table as new_events
    for each statement execute function webhook_endpoints_fan_out();

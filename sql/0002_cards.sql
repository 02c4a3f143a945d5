-- 0002: cards and what they need. The BIN catalogue and each merchant's
-- access to it, the cards themselves (the PAN sealed, never in clear), KYB
-- tiers and limits, the daily card-issuing counter, operator FX rates, the
-- time of the last successful authentication, and the outbox of events that
-- the callbacks issue delivers. Every constraint is named.

alter table merchants
    add column kyb_tier text not null default 'TIER_1'
        constraint merchants_kyb_tier_check check (kyb_tier in ('TIER_1', 'TIER_2', 'TIER_3')),
    add column last_authenticated_at timestamptz;

-- The outbox has its own gapless per-merchant sequence, kept on the head row
-- like the journal's.
alter table ledger_heads
    add column last_event_seq bigint not null default 0
        constraint ledger_heads_last_event_seq_check check (last_event_seq >= 0);

create table bins (
    bin        text    not null constraint bins_bin_check check (bin ~ '^[0-9]{6,8}$'),
    currency   text    not null constraint bins_currency_check check (currency ~ '^[A-Z]{3}$'),
    network    text    not null constraint bins_network_check check (network in ('VISA', 'MASTERCARD')),
    type       text    not null default 'VIRTUAL' constraint bins_type_check check (type = 'VIRTUAL'),
    enabled    boolean not null default true,
    created_at timestamptz not null default now(),
    constraint bins_pkey primary key (bin, currency)
);

-- The default catalogue: VISA and MASTERCARD in USD, EUR and GBP. These BINs
-- sit in ranges used for testing; an operator replaces them with the issuer
-- processor's real ranges (gateway bin add|disable).
insert into bins (bin, currency, network) values
    ('453201', 'USD', 'VISA'), ('453202', 'EUR', 'VISA'), ('453203', 'GBP', 'VISA'),
    ('522301', 'USD', 'MASTERCARD'), ('522302', 'EUR', 'MASTERCARD'), ('522303', 'GBP', 'MASTERCARD');

-- Per-merchant overrides of the default rule (a merchant may use the enabled
-- BINs in its own currencies): allowed = true opens a BIN entry, false
-- closes one.
create table merchant_bins (
    merchant_id bigint  not null constraint merchant_bins_merchant_fkey references merchants (id),
    bin         text    not null,
    currency    text    not null,
    allowed     boolean not null,
    constraint merchant_bins_pkey primary key (merchant_id, bin, currency),
    constraint merchant_bins_bin_fkey foreign key (bin, currency) references bins (bin, currency)
);

create table cards (
    card_no         text        not null constraint cards_pkey primary key
                                constraint cards_card_no_check check (card_no ~ '^crd_[a-z0-9]{20}$'),
    merchant_id     bigint      not null constraint cards_merchant_fkey references merchants (id),
    bin             text        not null,
    currency        text        not null,
    network         text        not null,
    last4           text        not null constraint cards_last4_check check (last4 ~ '^[0-9]{4}$'),
    expiry_month    smallint    not null constraint cards_expiry_month_check check (expiry_month between 1 and 12),
    expiry_year     smallint    not null constraint cards_expiry_year_check check (expiry_year between 2000 and 2199),
    -- AES-256-GCM under the data key, bound to "pan:<card_no>".
    pan_sealed      bytea       not null,
    -- HMAC-SHA256 of the PAN under a key derived from the data key: finds a
    -- duplicate PAN without storing it in clear or as a plain digest (a
    -- plain SHA-256 of a 16-digit PAN under a known BIN is brute-forced in
    -- seconds).
    pan_fingerprint bytea       not null constraint cards_pan_fingerprint_key unique,
    status          text        not null constraint cards_status_check check (status in ('ACTIVE', 'FROZEN', 'CANCELLED')),
    freeze_reason   text        constraint cards_freeze_reason_check check (length(freeze_reason) <= 255),
    remark          text        constraint cards_remark_check check (length(remark) <= 255),
    callback_url    text        constraint cards_callback_url_check check (length(callback_url) <= 2048),
    created_at      timestamptz not null,
    updated_at      timestamptz not null,
    cancelled_at    timestamptz,
    constraint cards_bin_fkey foreign key (bin, currency) references bins (bin, currency),
    constraint cards_cancelled_check check ((status = 'CANCELLED') = (cancelled_at is not null))
);
create index cards_merchant_idx on cards (merchant_id, created_at);

-- Limits per merchant and currency, in minor units. KYB tiers set them; the
-- operator may change each.
create table merchant_limits (
    merchant_id          bigint not null constraint merchant_limits_merchant_fkey references merchants (id),
    currency             text   not null,
    card_balance_max     bigint not null constraint merchant_limits_card_balance_max_check check (card_balance_max >= 0),
    daily_card_issue_max bigint not null constraint merchant_limits_daily_card_issue_max_check check (daily_card_issue_max >= 0),
    constraint merchant_limits_pkey primary key (merchant_id, currency)
);

-- What a merchant funded into cards on one UTC day (CARD_FUND), the running
-- total that the daily card-issuing limit checks. Written by the ledger
-- writer under the merchant's head lock, in the same transaction as the
-- entries it counts.
create table card_issue_daily (
    merchant_id bigint not null constraint card_issue_daily_merchant_fkey references merchants (id),
    currency    text   not null,
    day         date   not null,
    issued      bigint not null constraint card_issue_daily_issued_check check (issued >= 0),
    constraint card_issue_daily_pkey primary key (merchant_id, currency, day)
);

-- Operator FX rates: one unit of base is mid_rate units of quote. Merchants
-- get mid_rate with spread_bps taken off in the gateway's favour.
create table fx_rates (
    base       text        not null constraint fx_rates_base_check check (base ~ '^[A-Z]{3}$'),
    quote      text        not null constraint fx_rates_quote_check check (quote ~ '^[A-Z]{3}$'),
    mid_rate   numeric     not null constraint fx_rates_mid_rate_check check (mid_rate > 0),
    spread_bps integer     not null constraint fx_rates_spread_bps_check check (spread_bps between 0 and 9999),
    source     text        not null constraint fx_rates_source_check check (source in ('seed', 'operator')),
    updated_at timestamptz not null,
    constraint fx_rates_pkey primary key (base, quote),
    constraint fx_rates_pair_check check (base <> quote)
);

-- Seeded defaults for local use (source 'seed'); `gateway fx set` replaces
-- them. `gateway serve --demo` re-stamps stale seeded rates so that a local
-- gateway started days later still converts.
insert into fx_rates (base, quote, mid_rate, spread_bps, source, updated_at) values
    ('USD', 'EUR', 0.92, 50, 'seed', now()), ('EUR', 'USD', 1.087, 50, 'seed', now()),
    ('USD', 'GBP', 0.79, 50, 'seed', now()), ('GBP', 'USD', 1.266, 50, 'seed', now()),
    ('EUR', 'GBP', 0.858, 50, 'seed', now()), ('GBP', 'EUR', 1.165, 50, 'seed', now()),
    ('USD', 'JPY', 149.5, 50, 'seed', now()), ('JPY', 'USD', 0.00669, 50, 'seed', now());

-- The transactional outbox: every event is written in the transaction of
-- the change that causes it, with a gapless per-merchant sequence. The
-- callbacks issue delivers them; the payload is final when written.
create table events (
    merchant_id  bigint      not null constraint events_merchant_fkey references merchants (id),
    event_seq    bigint      not null constraint events_event_seq_check check (event_seq >= 1),
    event_id     text        not null constraint events_event_id_key unique,
    event_type   text        not null constraint events_event_type_check check (event_type ~ '^[a-z_]+\.[a-z_]+$'),
    subject      text        not null,
    payload      jsonb       not null,
    callback_url text,
    created_at   timestamptz not null,
    constraint events_pkey primary key (merchant_id, event_seq)
);
create index events_subject_idx on events (merchant_id, subject, event_seq);

create trigger events_append_only before update or delete on events
    for each row execute function journal_refuse_change();

-- Card accounts are found from their card (card info, batch balances).
create index accounts_card_idx on accounts (card_no, type) where card_no is not null;

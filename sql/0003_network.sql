-- 0003: the card network side. Authorizations (the holds), every
-- authorization attempt with its ISO 8583 response code, and the expiry
-- index. Money moves only through the journal; these rows are the state of
-- each hold, written in the same transaction as its entries.

create table authorizations (
    auth_id          text        not null constraint authorizations_pkey primary key
                                 constraint authorizations_auth_id_check check (auth_id ~ '^auth_[a-z0-9]{20}$'),
    merchant_id      bigint      not null constraint authorizations_merchant_fkey references merchants (id),
    card_no          text        not null constraint authorizations_card_fkey references cards (card_no),
    message_id       text        not null,
    -- The transaction as the network sent it.
    txn_amount       bigint      not null constraint authorizations_txn_amount_check check (txn_amount > 0),
    txn_currency     text        not null,
    fx_rate          text,
    -- In the card's currency: the converted amount and the cross-border fee
    -- held with it, and what is still held, captured and released.
    amount           bigint      not null constraint authorizations_amount_check check (amount > 0),
    fee              bigint      not null constraint authorizations_fee_check check (fee >= 0),
    currency         text        not null,
    held             bigint      not null constraint authorizations_held_check check (held >= 0),
    captured         bigint      not null default 0 constraint authorizations_captured_check check (captured >= 0),
    released         bigint      not null default 0 constraint authorizations_released_check check (released >= 0),
    status           text        not null constraint authorizations_status_check
                                 check (status in ('OPEN', 'CLEARED', 'REVERSED', 'EXPIRED')),
    merchant_name    text        constraint authorizations_merchant_name_check check (length(merchant_name) <= 100),
    mcc              text        constraint authorizations_mcc_check check (mcc ~ '^[0-9]{4}$'),
    merchant_country text        constraint authorizations_merchant_country_check check (merchant_country ~ '^[A-Z]{2}$'),
    expires_at       timestamptz not null,
    created_at       timestamptz not null,
    updated_at       timestamptz not null,
    -- A hold never holds more than it was approved for, and it is open
    -- exactly while something is held.
    constraint authorizations_held_max_check check (held <= amount + fee),
    constraint authorizations_open_check check ((status = 'OPEN') = (held > 0))
);
create index authorizations_card_idx on authorizations (card_no, created_at);
create index authorizations_expiry_idx on authorizations (expires_at) where status = 'OPEN';

-- Every authorization attempt, approved or declined. A decline moves no
-- money but is kept: the card's owner and the network both ask why.
create table auth_attempts (
    id               bigint      generated always as identity constraint auth_attempts_pkey primary key,
    message_id       text        not null constraint auth_attempts_message_id_key unique,
    merchant_id      bigint      constraint auth_attempts_merchant_fkey references merchants (id),
    card_no          text        not null,
    txn_amount       bigint      not null,
    txn_currency     text        not null,
    approved         boolean     not null,
    response_code    text        not null constraint auth_attempts_response_code_check check (response_code ~ '^[0-9]{2}$'),
    reason           text        not null,
    auth_id          text,
    merchant_name    text,
    mcc              text,
    merchant_country text,
    created_at       timestamptz not null,
    constraint auth_attempts_approved_check check (approved = (response_code = '00')),
    constraint auth_attempts_auth_check check (approved = (auth_id is not null))
);
create index auth_attempts_card_idx on auth_attempts (card_no, id);

-- 0004: remittances. The remittance rows with their lifecycle state, the
-- append-only history of every transition, the sanctions list screening
-- reads, and the remittance limit of the KYB tiers.

-- NULL: the tier's default, converted from USD (docs/remittances.md).
alter table merchant_limits
    add column remittance_max bigint constraint merchant_limits_remittance_max_check check (remittance_max >= 0);

create table remittances (
    tx_id            text        not null constraint remittances_pkey primary key
                                 constraint remittances_tx_id_check check (tx_id ~ '^rmt_[a-z0-9]{20}$'),
    merchant_id      bigint      not null constraint remittances_merchant_fkey references merchants (id),
    payer_id         text        not null constraint remittances_payer_id_check check (length(payer_id) between 1 and 64),
    beneficiary      jsonb       not null,
    amount           bigint      not null constraint remittances_amount_check check (amount > 0),
    fee              bigint      not null constraint remittances_fee_check check (fee >= 0),
    currency         text        not null,
    purpose          text,
    rail             text        not null constraint remittances_rail_check check (rail in ('SEPA', 'LOCAL', 'SWIFT')),
    status           text        not null constraint remittances_status_check
                                 check (status in ('SUBMITTED', 'SCREENING', 'IN_FLIGHT', 'SETTLED', 'RETURNED', 'REJECTED')),
    callback_url     text        constraint remittances_callback_url_check check (length(callback_url) <= 2048),
    reason           text,       -- the return reason (ISO) or the rejection reason
    -- When the lifecycle worker may take the next step, and until when a
    -- worker that claimed it holds it (SKIP LOCKED claims; the transition
    -- itself is checked again under the merchant's lock).
    next_action_at   timestamptz,
    claimed_until    timestamptz,
    created_at       timestamptz not null,
    updated_at       timestamptz not null,
    settled_at       timestamptz,
    constraint remittances_settled_check check ((status = 'SETTLED') = (settled_at is not null)),
    constraint remittances_final_check check (
        (status in ('SETTLED', 'RETURNED', 'REJECTED')) = (next_action_at is null))
);
create index remittances_due_idx on remittances (next_action_at) where next_action_at is not null;
create index remittances_merchant_idx on remittances (merchant_id, created_at);

create table remittance_history (
    tx_id     text        not null constraint remittance_history_tx_fkey references remittances (tx_id),
    seq       integer     not null constraint remittance_history_seq_check check (seq >= 1),
    status    text        not null,
    reason    text,
    at        timestamptz not null,
    constraint remittance_history_pkey primary key (tx_id, seq)
);
create trigger remittance_history_append_only before update or delete on remittance_history
    for each row execute function journal_refuse_change();

-- The sanctions list the operator loads (gateway sanctions load FILE):
-- replaced as a whole, versioned so that workers reload it when it changes.
create table sanctions_entries (
    id         bigint generated always as identity constraint sanctions_entries_pkey primary key,
    version    bigint not null,
    name       text   not null constraint sanctions_entries_name_check check (length(name) between 1 and 300),
    country    text   constraint sanctions_entries_country_check check (country ~ '^[A-Z]{2}$'),
    list       text,
    entry_ref  text
);
create index sanctions_entries_version_idx on sanctions_entries (version);

-- Period close (issue 30 point 4; docs/audit.md, "Period close"): finance
-- closes a day or a month of one merchant. A close records the merchant's
-- head at the end of the period (the last entry before it) and the balance
-- of every account up to that entry, signed like a checkpoint by a key the
-- database never holds (internal/audit/close.go). Entries are never
-- back-dated, so a close is a sealed statement, not a lock on writes;
-- audit verify recomputes every close from the journal.
create table audit_period_closes (
    id           bigint      generated always as identity constraint audit_period_closes_pkey primary key,
    merchant_id  bigint      not null constraint audit_period_closes_merchant_fkey references merchants (id),
    period_kind  text        not null constraint audit_period_closes_kind_check check (period_kind in ('day', 'month')),
    period_start date        not null,
    period_end   timestamptz not null,
    closed_at    timestamptz not null,
    head_seq     bigint      not null constraint audit_period_closes_head_seq_check check (head_seq >= 0),
    head_hash    bytea       not null constraint audit_period_closes_head_hash_check check (length(head_hash) = 32),
    balances     jsonb       not null,
    key_id       text        not null,
    signed       bytea       not null,
    signature    bytea       not null constraint audit_period_closes_signature_check check (length(signature) = 64),
    -- A period is closed once; a close is never made before its period ended.
    constraint audit_period_closes_period_key unique (merchant_id, period_kind, period_start),
    constraint audit_period_closes_after_end_check check (closed_at >= period_end)
);
create trigger audit_period_closes_append_only before update or delete on audit_period_closes
    for each row execute function journal_refuse_change();
create trigger audit_period_closes_no_truncate before truncate on audit_period_closes
    for each statement execute function journal_refuse_change();

grant select on audit_period_closes to gateway_auditor;

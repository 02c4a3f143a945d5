-- Corrections without edits (docs/finance.md, "Corrections"). Owned by
-- package internal/adjustment.
--
-- An adjustment is proposed by one house user and approved, or rejected,
-- by another (maker–checker); its approval posts one ADJUSTMENT entry: the
-- exact opposite of an earlier entry of the merchant (mode 'reversal'), or
-- a movement between the merchant's funding account and a house account
-- (mode 'free'). A proposal not decided by expires_at is expired: it stays
-- PROPOSED here, is shown as EXPIRED, and can no longer be approved.
create table adjustments (
    id             bigint      generated always as identity constraint adjustments_pkey primary key,
    merchant_id    bigint      not null constraint adjustments_merchant_fkey references merchants (id),
    mode           text        not null constraint adjustments_mode_check check (mode in ('reversal', 'free')),
    reverses_seq   bigint      constraint adjustments_reverses_check check (reverses_seq >= 1),
    house_account  text        constraint adjustments_house_check check (house_account in ('world', 'fee_revenue')),
    direction      text        constraint adjustments_direction_check check (direction in ('credit', 'debit')),
    amount         bigint      constraint adjustments_amount_check check (amount > 0 and amount <= 1000000000000000),
    currency       text        constraint adjustments_currency_check check (currency ~ '^[A-Z]{3}$'),
    reason         text        not null constraint adjustments_reason_check check (length(reason) between 3 and 500),
    reference      text        not null constraint adjustments_reference_check check (length(reference) between 1 and 64),
    status         text        not null constraint adjustments_status_check check (status in ('PROPOSED', 'APPROVED', 'REJECTED')),
    proposed_by    bigint      not null constraint adjustments_proposed_by_fkey references console_users (id),
    proposed_login text        not null,
    proposed_at    timestamptz not null,
    expires_at     timestamptz not null,
    decided_by     bigint      constraint adjustments_decided_by_fkey references console_users (id),
    decided_login  text,
    decided_at     timestamptz,
    entry_seq      bigint, -- the ADJUSTMENT entry an approval posted
    constraint adjustments_shape_check check (
        (mode = 'reversal' and reverses_seq is not null and house_account is null and amount is null)
     or (mode = 'free' and reverses_seq is null and house_account is not null and direction is not null
         and amount is not null and currency is not null)),
    -- Nobody approves or rejects their own proposal, whatever the session.
    constraint adjustments_checker_check check (decided_by is null or decided_by <> proposed_by),
    constraint adjustments_decided_check check ((status = 'PROPOSED') = (decided_by is null)),
    constraint adjustments_entry_check check ((status = 'APPROVED') = (entry_seq is not null))
);
create index adjustments_merchant_idx on adjustments (merchant_id, id);
-- An entry is reversed at most once: the check before posting says so in
-- words, this index holds it whatever happens.
create unique index adjustments_reversal_once on adjustments (merchant_id, reverses_seq) where status = 'APPROVED';

grant select on adjustments to gateway_auditor;

-- Refunds from the card network carry the network's message id
-- (docs/finance.md, "Refund reconciliation"; owned by internal/network,
-- internal/network/refund.go).
--
-- A network_refunds row is written with its CARD_REFUND entry, in the same
-- batch transaction, and names it. The message id is the refund's identity
-- for ever: the primary key refuses a message replayed after its
-- idempotency key expired (as auth_attempts' unique message id does for an
-- authorization), so a refund is booked at most once per message. The id
-- is also the entry's tx_id, hashed into the journal and shown as the bill
-- line's txId: two equal refunds on one card and day are told apart, and a
-- refund file is matched by it. Refunds booked before this migration have
-- no row and no id (nothing to back-fill: the id was never kept).
create table network_refunds (
    message_id   text        not null constraint network_refunds_pkey primary key
                             constraint network_refunds_message_id_check check (message_id ~ '^[A-Za-z0-9_.:-]{1,64}$'),
    merchant_id  bigint      not null,
    merchant_seq bigint      not null,
    created_at   timestamptz not null,
    constraint network_refunds_entry_fkey foreign key (merchant_id, merchant_seq) references entries (merchant_id, merchant_seq),
    constraint network_refunds_entry_key unique (merchant_id, merchant_seq)
);

-- The refund reconciliation's ledger side is every CARD_REFUND entry of a
-- period (those from before this migration too): a range of this index,
-- as entries_card_settle_idx is for the clearings.
-- The date in its predicate is there for the writer's prepared statements:
-- the card's refund sum (internal/network bounds.go) states kind =
-- 'CARD_REFUND' and the card, so without it this index qualifies for that
-- statement too, and a connection that plans it on a young database (empty
-- tables: ledger/plans_test.go) may pick a whole scan of this index over a
-- probe of entries_card_refund_idx and keep that plan while refunds grow.
-- The period read states its dates as literals (bun formats them), which
-- imply this one; no entry is older (RefundsBetween clamps its start).
create index entries_card_refund_day_idx on entries (created_at, id)
    where kind = 'CARD_REFUND' and created_at >= '2000-01-01 00:00:00+00';

-- A matched refund file records its refunds as kind 'network_refund'
-- (reconcile/records.go): a refund is reconciled at most once.
alter table reconciliation_runs drop constraint reconciliation_runs_kind_check;
alter table reconciliation_runs add constraint reconciliation_runs_kind_check
    check (kind in ('card_clearing', 'bank_deposit', 'rail_remittance', 'network_refund'));

grant select on network_refunds to gateway_auditor;

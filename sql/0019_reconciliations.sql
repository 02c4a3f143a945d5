-- 0017: what reconciliation has accepted (docs/audit.md, "Recorded
-- reconciliations"). Owned by package reconcile (reconcile/records.go).
--
-- A reconciliation run is one file that matched the ledger completely; its
-- reconciled items are the journal entries it accounted for. An entry is
-- reconciled at most once per kind of reconciliation, so a second file that
-- claims it (the network billing one clearing twice) is caught by the
-- primary key, across files and runs, whoever runs them.
--
-- kind names the reconciliation: 'card_clearing' (a card network
-- settlement file against CARD_SETTLE entries). Later kinds (refunds from
-- the network, the rail's remittance settlement report, bank statements
-- against deposits) record their runs and entries in the same two tables.
create table reconciliation_runs (
    id           bigint      generated always as identity constraint reconciliation_runs_pkey primary key,
    kind         text        not null constraint reconciliation_runs_kind_check check (kind in ('card_clearing')),
    -- The file's SHA-256: the same file is the same run (a re-run is
    -- reported as already recorded, never as a second claim).
    file_sha256  bytea       not null constraint reconciliation_runs_sha256_check check (length(file_sha256) = 32),
    file_name    text        not null constraint reconciliation_runs_name_check check (length(file_name) between 1 and 200),
    period_from  date        not null,
    period_to    date        not null,
    actor        text        not null constraint reconciliation_runs_actor_check check (length(actor) between 1 and 200),
    recorded_at  timestamptz not null default now(),
    rows         bigint      not null constraint reconciliation_runs_rows_check check (rows >= 0),
    items        bigint      not null constraint reconciliation_runs_items_check check (items >= 0),
    constraint reconciliation_runs_period_check check (period_to >= period_from),
    constraint reconciliation_runs_file_key unique (kind, file_sha256)
);

create table reconciled_items (
    kind     text   not null,
    entry_id bigint not null constraint reconciled_items_entry_fkey references entries (id),
    run_id   bigint not null constraint reconciled_items_run_fkey references reconciliation_runs (id),
    line     bigint not null constraint reconciled_items_line_check check (line >= 1), -- the file's line
    constraint reconciled_items_pkey primary key (kind, entry_id)
);
create index reconciled_items_run_idx on reconciled_items (run_id);

-- A record is evidence: it is never changed or removed.
create function reconciliation_refuse_change() returns trigger language plpgsql as
$$
begin
    raise exception 'reconciliation records are append-only: % on % is refused', tg_op, tg_table_name
        using errcode = 'restrict_violation';
end
$$;
create trigger reconciliation_runs_append_only before update or delete on reconciliation_runs
    for each row execute function reconciliation_refuse_change();
create trigger reconciled_items_append_only before update or delete on reconciled_items
    for each row execute function reconciliation_refuse_change();
create trigger reconciliation_runs_no_truncate before truncate on reconciliation_runs
    for each statement execute function reconciliation_refuse_change();
create trigger reconciled_items_no_truncate before truncate on reconciled_items
    for each statement execute function reconciliation_refuse_change();

-- Auditors read what was reconciled, by whom and when.
grant select on reconciliation_runs, reconciled_items to gateway_auditor;

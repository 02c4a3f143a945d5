-- Moving a merchant between cells (issue 33 point 3; docs/scaling.md,
-- "Moving a merchant between cells"). internal/cellmove owns these tables.
--
-- A move copies every row of one merchant from a source cell's database to
-- a target cell's, ids unchanged, verifies the copy, switches the
-- directory, then removes the rows at the source. The journal is
-- append-only for everyone; one dedicated role, gateway_mover, may pass its
-- guard, and only for what a move needs:
--   * DELETE of a merchant's rows at the source once its tombstone exists
--     and the rows are not yet removed (the move has switched);
--   * DELETE of a merchant's rows at the target while its arrival is still
--     being copied (a move rolled back), and INSERT into the two tables that
--     refuse every insert (bill_rules_legacy, bill_openings) during that copy.
-- UPDATE and TRUNCATE stay refused for it too. Every row the target
-- receives goes through the target's own constraints and insert triggers
-- (the postings' merchant and currency check, the bill blocks' counts, the
-- webhook fan-out), and the copy is accepted only when audit verify of that
-- merchant passes on the target and its head equals the source's.

-- The role belongs to the cluster (like gateway_app, sql/0030): another
-- database may be making it at this very moment. NOLOGIN: the operator
-- running `gateway cells move` connects as itself and the mover takes the
-- role with SET LOCAL ROLE in each of its transactions, which needs
-- membership (GRANT gateway_mover TO <operator>; a superuser has it).
do $$
begin
    if not exists (select 1 from pg_roles where rolname = 'gateway_mover') then
        create role gateway_mover nologin;
    end if;
exception
    when duplicate_object or unique_violation then
        null;
    when insufficient_privilege then
        raise exception 'the role gateway_mover does not exist and this database user may not create roles'
            using errcode = 'insufficient_privilege',
                  hint = 'a superuser runs CREATE ROLE gateway_mover NOLOGIN once, then the migration again (docs/scaling.md)';
end
$$;

-- A move as its source records it: a state machine, so that a mover killed
-- at any step resumes it or rolls it back (internal/cellmove/state.go).
-- copying: the background copy runs, the merchant is live at the source;
-- paused: the directory says moving and the fence below holds its journal;
-- verified: the target's copy passed audit verify with the source's head;
-- switched: the directory names the target, the tombstone exists;
-- removed: the source's rows are gone; rolled_back: the target's copy is
-- gone and the merchant is live at the source again.
create table cellmove_moves (
    id          bigint      generated always as identity constraint cellmove_moves_pkey primary key,
    merchant_id bigint      not null,
    shop_no     text        not null,
    from_cell   text        not null,
    to_cell     text        not null,
    state       text        not null constraint cellmove_moves_state_check
                            check (state in ('copying', 'paused', 'verified', 'switched', 'removed', 'rolled_back')),
    started_at  timestamptz not null default now(),
    paused_at   timestamptz,
    switched_at timestamptz,
    finished_at timestamptz,
    pause_ms    bigint,
    rows_copied bigint      not null default 0
);
-- One open move per merchant.
create unique index cellmove_moves_open_key on cellmove_moves (merchant_id)
    where state not in ('removed', 'rolled_back');

-- What a source keeps of a merchant that moved away: its shop number and
-- id, the last entry's sequence and hash (the target's chain continues from
-- them), the cell it went to and when. Append-only.
create table cellmove_tombstones (
    move_id     bigint      not null constraint cellmove_tombstones_pkey primary key,
    shop_no     text        not null,
    merchant_id bigint      not null,
    last_seq    bigint      not null,
    last_hash   bytea,
    to_cell     text        not null,
    moved_at    timestamptz not null,
    removed_at  timestamptz
);
create index cellmove_tombstones_merchant_idx on cellmove_tombstones (merchant_id);

-- What a target records of a merchant arriving: while state is copying, the
-- rows may still be removed (a roll-back); arrived: they are the merchant's.
create table cellmove_arrivals (
    id          bigint      generated always as identity constraint cellmove_arrivals_pkey primary key,
    merchant_id bigint      not null,
    shop_no     text        not null,
    from_cell   text        not null,
    state       text        not null constraint cellmove_arrivals_state_check check (state in ('copying', 'arrived', 'rolled_back')),
    started_at  timestamptz not null default now(),
    finished_at timestamptz
);
create unique index cellmove_arrivals_open_key on cellmove_arrivals (merchant_id) where state = 'copying';

-- cellmove_mover_may reports whether gateway_mover may do op on a row of
-- merchant m: the exceptions listed at the top, nothing else.
create function cellmove_mover_may(op text, m bigint) returns boolean
language sql stable as $$
    select current_user = 'gateway_mover' and m is not null and (
        (op = 'DELETE' and exists (select 1 from cellmove_tombstones t where t.merchant_id = m and t.removed_at is null))
        or (op in ('DELETE', 'INSERT') and exists (select 1 from cellmove_arrivals a where a.merchant_id = m and a.state = 'copying')))
$$;

-- The journal's guard (sql/0001), with the mover's exceptions. The row's
-- merchant is its merchant_id column; remittance_history names its
-- remittance, whose merchant it is. A statement-level trigger (TRUNCATE)
-- has no row and is refused as before.
create or replace function journal_refuse_change() returns trigger
    language plpgsql as
$$
declare
    r jsonb;
    m bigint;
begin
    if tg_level = 'ROW' and current_user = 'gateway_mover' then
        r := to_jsonb(case when tg_op = 'INSERT' then new else old end);
        m := (r ->> 'merchant_id')::bigint;
        if m is null and tg_table_name = 'remittance_history' then
            select merchant_id into m from remittances where tx_id = r ->> 'tx_id';
        end if;
        if cellmove_mover_may(tg_op, m) then
            if tg_op = 'INSERT' then
                return new;
            end if;
            return old;
        end if;
    end if;
    raise exception 'the journal is append-only: % on % is refused', tg_op, tg_table_name
        using errcode = 'restrict_violation';
end
$$;

-- The console's audit trail (sql/0012, 0018): a merchant's own users'
-- rows move with them; the same exception for DELETE only.
create or replace function console_audit_refuse_change() returns trigger
    language plpgsql as
$$
begin
    if tg_level = 'ROW' and tg_op = 'DELETE' and cellmove_mover_may('DELETE', old.merchant_id) then
        return old;
    end if;
    raise exception 'the console audit trail is append-only: % on % is refused', tg_op, tg_table_name
        using errcode = 'restrict_violation';
end
$$;

-- The fence: once a move is paused, the source's journal of that merchant
-- takes no more entries. The mover takes the merchant's ledger_heads row
-- FOR UPDATE (waiting for the batches that hold it) in the transaction that
-- records the pause; a batch that was already on its way and locks the row
-- after that commit fails here with lock_not_available, which the ledger
-- answers as EUNAVAILABLE (503, retry): nothing of it was written, and the
-- retry reaches the merchant's new cell. One index probe per batch and
-- merchant.
create function cellmove_fence() returns trigger
    language plpgsql as
$$
begin
    if exists (select 1 from cellmove_moves where merchant_id = new.merchant_id and state in ('paused', 'verified', 'switched'))
       or exists (select 1 from cellmove_tombstones where merchant_id = new.merchant_id and removed_at is null) then
        raise exception 'merchant % is moving to another cell', new.merchant_id
            using errcode = 'lock_not_available';
    end if;
    return new;
end
$$;
create trigger ledger_heads_cellmove_fence before update on ledger_heads
    for each row execute function cellmove_fence();

-- The mover reads, writes and removes rows of every table (its exceptions
-- above are what lets it past the guards). It stages rows in temporary
-- tables that the operator's own session creates before taking the role
-- (internal/cellmove/copy.go), so it needs no TEMP on the database.
grant usage on schema public to gateway_mover;
grant select, insert, update, delete on all tables in schema public to gateway_mover;
alter default privileges in schema public grant select, insert, update, delete on tables to gateway_mover;

-- The move's fence costs nothing on the hot path (issue 28/33;
-- docs/scaling.md, "What the fence costs").
--
-- sql/0035's fence ran its function on every update of ledger_heads, that
-- is on every write batch of every merchant, and probed cellmove_moves and
-- cellmove_tombstones each time, to refuse the few merchants being moved.
-- Now the fence is a column of the head row itself: the mover sets it in
-- the transaction that records the pause (holding the row FOR UPDATE, so
-- the batches that held the head have committed and every later one reads
-- the row with the fence set) and clears it in the one that records a
-- roll-back; the source's removal deletes the row with the rest of the
-- merchant. The trigger's WHEN reads only the old and new row, so for an
-- unfenced merchant PostgreSQL does not call the function at all.
--
-- new.cellmove_fenced in the WHEN lets the mover's own clearing through;
-- a batch never writes the column (ledger/flush.go names the ones it
-- sets), so for a batch new equals old there. The column is the source
-- cell's state of a move, not the merchant's data: the copy leaves it out
-- (internal/cellmove/tables.go), and the target's row starts unfenced.
alter table ledger_heads add column cellmove_fenced boolean not null default false;

-- The trigger is replaced before the fences below are set: the old one
-- would refuse that very update for a merchant being moved.
drop trigger ledger_heads_cellmove_fence on ledger_heads;

-- Fired only for a fenced head, it refuses the batch as before:
-- lock_not_available, which the ledger answers as EUNAVAILABLE (503,
-- retry); nothing of the batch was written, and the retry reaches the
-- merchant's new cell.
create or replace function cellmove_fence() returns trigger
    language plpgsql as
$$
begin
    raise exception 'merchant % is moving to another cell', new.merchant_id
        using errcode = 'lock_not_available';
end
$$;
create trigger ledger_heads_cellmove_fence before update on ledger_heads
    for each row when (old.cellmove_fenced and new.cellmove_fenced)
    execute function cellmove_fence();

-- A move paused when this migration runs keeps its fence: every merchant
-- sql/0035's function would have refused.
update ledger_heads h set cellmove_fenced = true
where exists (select 1 from cellmove_moves where merchant_id = h.merchant_id and state in ('paused', 'verified', 'switched'))
   or exists (select 1 from cellmove_tombstones where merchant_id = h.merchant_id and removed_at is null);

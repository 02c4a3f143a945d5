-- Issue 20 (docs/performance.md, "One merchant against sixteen"): every
-- entry's foreign key to its merchant took a KEY SHARE lock on the
-- merchant's row in merchants, which no other statement of the batch
-- locks: a write of that row (its lock, with a WAL record) per merchant per
-- batch, and, since the authentication times are written to the same rows
-- once a second, a MultiXact whenever that update met a batch's lock. The
-- writer already holds the merchant's ledger_heads row FOR UPDATE, and
-- PostgreSQL does nothing more for a KEY SHARE lock on a row the
-- transaction holds more strongly. So entries and events, written only under
-- that lock, refer to the head instead. ledger_heads.merchant_id is itself
-- a key referring to merchants, with one head per merchant from its
-- creation: what the database guarantees about entries and events is the
-- same.
alter table entries drop constraint entries_merchant_fkey;
alter table entries add constraint entries_merchant_fkey
    foreign key (merchant_id) references ledger_heads (merchant_id) not valid;
alter table entries validate constraint entries_merchant_fkey;

alter table events drop constraint events_merchant_fkey;
alter table events add constraint events_merchant_fkey
    foreign key (merchant_id) references ledger_heads (merchant_id) not valid;
alter table events validate constraint events_merchant_fkey;

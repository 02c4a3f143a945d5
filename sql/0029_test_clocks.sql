-- Test clocks (docs/api.md, "The sandbox", "The test clock"): how far a test
-- merchant has moved its clock ahead of real time. The journal keeps real
-- time; advancing moves the merchant's pending deadlines (holds' expiry,
-- remittances' next step, callbacks' next retry) earlier by the same span,
-- in the transaction that adds it here (internal/testclock).
create table test_clocks (
    merchant_id    bigint      primary key constraint test_clocks_merchant_fkey references merchants (id),
    offset_seconds bigint      not null constraint test_clocks_offset_check check (offset_seconds >= 0),
    updated_at     timestamptz not null
);

-- 0008: what the reversals of an authorization have reversed, in the
-- transaction's currency. A reversal no longer converts its amount anew: it
-- releases the share of the hold (converted once, at authorization) that
-- txn_reversed / txn_amount makes, rounded down, so that the reversal that
-- brings txn_reversed to txn_amount releases exactly what is left, the
-- cross-border fee included (postings.Hold, docs/network.md).
alter table authorizations
    add column txn_reversed bigint not null default 0
        constraint authorizations_txn_reversed_check check (txn_reversed >= 0 and txn_reversed <= txn_amount);

-- An open hold in the card's own currency reversed in part before this
-- column released exactly the transaction amount reversed. (One in another
-- currency cannot be told; the ledger then never releases more than is
-- held, and the last reversal releases the rest.)
update authorizations set txn_reversed = least(released, txn_amount - 1)
where status = 'OPEN' and txn_currency = currency and released > 0;

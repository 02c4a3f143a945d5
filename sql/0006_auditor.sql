-- 0006: auditors. A read-only role for people who check the books straight
-- in PostgreSQL, the two views they start from (the bill and the trial
-- balance), and the index that settlement-file reconciliation reads.
-- docs/audit.md is the guide.

-- Roles belong to the cluster, not to one database: another database of the
-- cluster (a second gateway, a test database) may have made this one
-- already, possibly at this very moment.
do $$
begin
    if not exists (select 1 from pg_roles where rolname = 'gateway_auditor') then
        create role gateway_auditor nologin;
    end if;
exception
    when duplicate_object or unique_violation then
        null;
    when insufficient_privilege then
        raise exception 'the role gateway_auditor does not exist and this database user may not create roles'
            using errcode = 'insufficient_privilege',
                  hint = 'a superuser runs CREATE ROLE gateway_auditor NOLOGIN once, then the migration again (docs/audit.md)';
end
$$;

-- The bill: one row per bill line, with the merchant's shop number and the
-- account in the bill's terms ('funding', or the card number of a card's
-- available balance). Amounts and balances are in minor units of currency.
create view bill as
select m.shop_no,
       b.merchant_id,
       b.bill_seq,
       b.merchant_seq,
       b.posting_idx,
       b.kind,
       b.amount,
       b.currency,
       b.balance_after,
       b.created_at,
       a.type as account_type,
       case when a.type = 'funding' then 'funding' else a.card_no end as account,
       b.card_no,
       b.tx_id,
       b.auth_id
from bill_lines b
join merchants m on m.id = b.merchant_id
join accounts a on a.id = b.account_id;

-- The trial balance: the balances of every account summed per currency and
-- account type. Every movement takes from one account what it gives to
-- another in the same currency, so currency_total is zero on every row.
create view trial_balance as
select a.currency,
       a.type as account_type,
       count(*) as accounts,
       sum(b.balance) as balance,
       sum(sum(b.balance)) over (partition by a.currency) as currency_total
from accounts a
join balances b on b.account_id = a.id
group by a.currency, a.type;

-- Read-only: USAGE on the schema and SELECT on the journal, what is derived
-- from it and the two views; of the merchants, only the columns that name
-- them (never the key digests or the sealed signing key). Nothing else, and
-- no table created later is readable without a grant of its own.
grant usage on schema public to gateway_auditor;
grant select on entries, postings, accounts, balances, bill_lines, ledger_heads, bill, trial_balance
    to gateway_auditor;
grant select (id, shop_no, name, currencies, status, created_at) on merchants to gateway_auditor;
grant execute on function entry_canonical(bigint, bigint) to gateway_auditor;

-- Settlement-file reconciliation lists the CARD_SETTLE entries of a date
-- range in (created_at, id) order, a page at a time; without this index each
-- page would scan the journal. It only holds CARD_SETTLE entries.
create index entries_card_settle_idx on entries (created_at, id) where kind = 'CARD_SETTLE';

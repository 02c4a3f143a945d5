-- The bill is the whole position (issue 29, point 2; docs/finance.md, "The
-- bill is the whole position"). From this migration on, the writer makes
-- bill lines for a card's held funds and its receivable as well as for
-- funding and available balances, and types each line by what the money
-- did (postings.BillLineType: FEE, RECEIVABLE, RECEIVABLE_RECOVERY beside
-- the entry kinds). The journal is never edited and its lines are
-- append-only, so the entries booked before keep the lines they were given
-- (their entry's kind, funding and available accounts only). These two
-- tables say where the old rules end, so that audit verify checks each
-- entry by the rules it was booked under, and so that the chain and the
-- statement of a held or receivable account start from what it held then.

-- Per merchant: its last entry booked under the old rules. A merchant
-- created later has no row: every entry of it follows the new rules.
create table bill_rules_legacy (
    merchant_id bigint not null constraint bill_rules_legacy_pkey primary key,
    last_seq    bigint not null constraint bill_rules_legacy_last_seq_check check (last_seq >= 0)
);
insert into bill_rules_legacy (merchant_id, last_seq)
select merchant_id, last_seq from ledger_heads where last_seq > 0;

-- Per held or receivable account that was not zero then: its balance when
-- its lines began (the balance_after its first line continues from).
create table bill_openings (
    account_id  bigint not null constraint bill_openings_pkey primary key,
    merchant_id bigint not null,
    balance     bigint not null constraint bill_openings_balance_check check (balance <> 0)
);
insert into bill_openings (account_id, merchant_id, balance)
select a.id, a.merchant_id, b.balance
from accounts a
join balances b on b.account_id = a.id
where a.type in ('card_held', 'card_receivable') and b.balance <> 0;

-- Both are written once, here, and only read: refused like the journal.
create trigger bill_rules_legacy_append_only before insert or update or delete on bill_rules_legacy
    for each row execute function journal_refuse_change();
create trigger bill_openings_append_only before insert or update or delete on bill_openings
    for each row execute function journal_refuse_change();

grant select on bill_rules_legacy, bill_openings to gateway_auditor;

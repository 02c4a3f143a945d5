-- Deposits with the bank's reference (docs/finance.md, "Deposits and the
-- bank statement"). Owned by package internal/deposit.
--
-- The reference is also the DEPOSIT entry's tx_id, which the bill shows;
-- this table makes it unique per merchant and currency (the entry's
-- currency is on its posting, where no index of entries can reach it). A
-- deposit from before references has no row: it reads as before.
create table deposit_references (
    merchant_id    bigint not null,
    currency       text   not null constraint deposit_references_currency_check check (currency ~ '^[A-Z]{3}$'),
    bank_reference text   not null constraint deposit_references_reference_check check (bank_reference ~ '^[A-Za-z0-9_.:-]{1,35}$'),
    merchant_seq   bigint not null,
    constraint deposit_references_pkey primary key (merchant_id, currency, bank_reference),
    constraint deposit_references_entry_fkey foreign key (merchant_id, merchant_seq) references entries (merchant_id, merchant_seq)
);

create trigger deposit_references_append_only before update or delete on deposit_references
    for each row execute function journal_refuse_change();

grant select on deposit_references to gateway_auditor;

-- More kinds of reconciliation in the records of what reconciliation has
-- accepted (reconciliation_runs, reconciled_items; owned by package
-- reconcile, docs/finance.md "Bank statement reconciliation"):
--
--   'bank_deposit'     a bank statement's lines against DEPOSIT entries,
--                      matched by the bank reference (the entry's txId).
--   'rail_remittance'  the rail's settlement report against REMIT_SETTLE and
--                      REMIT_RETURN entries, matched by the remittance's txId.
--
-- An entry is reconciled at most once per kind (reconciled_items' primary
-- key), so a deposit claimed by a second statement is caught across files
-- and runs, as a card clearing is; a remittance's end likewise.
alter table reconciliation_runs drop constraint reconciliation_runs_kind_check;
alter table reconciliation_runs add constraint reconciliation_runs_kind_check
    check (kind in ('card_clearing', 'bank_deposit', 'rail_remittance'));

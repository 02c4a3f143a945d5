-- 0017: the console's write-ahead audit rows (docs/console.md, "The audit
-- trail"; docs/audit.md, "The console's audit trail"). A domain command
-- (a card's, the ledger's, a remittance's) runs in its own domain's
-- transaction, which the console cannot join; so its row is committed
-- BEFORE the command as 'pending' (who, what, the safe values), and
-- resolved after it to 'ok', 'refused' or 'failed' with the error code. A
-- row left 'pending' means "outcome unknown": the attempt is on record,
-- the console could not say how it ended.
--
-- Old rows stay valid: the new columns have defaults, the new outcome only
-- widens the check.
alter table console_audit
    add column error_code  text not null default ''
        constraint console_audit_error_code_check check (error_code ~ '^[a-z_]{0,32}$'),
    add column resolved_at timestamptz;

alter table console_audit drop constraint console_audit_outcome_check;
alter table console_audit add constraint console_audit_outcome_check
    check (outcome in ('ok', 'refused', 'failed', 'pending'));

-- The trail stays append-only but for one change, made once: a pending
-- row is resolved. Who, when, from where, the action and the intent's
-- detail never change; the detail may only grow (the result is appended
-- to the intent), a target or merchant only be filled in where the intent
-- had none (a merchant created, a list version loaded). Every other
-- UPDATE, any DELETE and TRUNCATE are refused as before.
create function console_audit_resolve_only() returns trigger
    language plpgsql as
$$
begin
    if old.outcome = 'pending' and new.outcome in ('ok', 'refused', 'failed')
       and new.id = old.id and new.at = old.at and new.user_id = old.user_id and new.login = old.login
       and new.role = old.role and new.action = old.action and new.address = old.address
       and starts_with(new.detail, old.detail)
       and (new.target = old.target or old.target = '')
       and (new.merchant_id is not distinct from old.merchant_id or old.merchant_id is null)
       and new.resolved_at is not null then
        return new;
    end if;
    raise exception 'the console audit trail is append-only: % on % is refused (only a pending row''s outcome is set, once)',
        tg_op, tg_table_name
        using errcode = 'restrict_violation';
end
$$;

drop trigger console_audit_append_only on console_audit;
create trigger console_audit_no_delete before delete on console_audit
    for each row execute function console_audit_refuse_change();
create trigger console_audit_resolve_only before update on console_audit
    for each row execute function console_audit_resolve_only();

-- An auditor's question "which actions have no known outcome?" reads few
-- rows of a trail that grows with every login.
create index console_audit_pending_idx on console_audit (at, id) where outcome = 'pending';

-- 0015: the operator's sanctions page (docs/console.md, "Sanctions") says
-- who loaded the current list from the console and when, from the audit
-- trail's sanctions.load rows. Those rows are few in a trail that grows
-- with every login; a partial index finds them without reading the rest.
create index console_audit_sanctions_idx on console_audit (target, id) where action = 'sanctions.load' and outcome = 'ok';

-- 0007: the posting check of 0001 (postings_check_accounts) as index probes.
-- PL/pgSQL plans its query once per connection, and the gateway asks for
-- generic plans (plan_cache_mode = force_generic_plan): a connection whose
-- first insert into postings carried many rows while accounts was young
-- would keep a hash join over a scan of every account. Each posting now
-- probes accounts_pkey for its two accounts, whatever the statistics
-- (docs/performance.md, "Plans that do not depend on the statistics").
create or replace function postings_check_accounts() returns trigger
    language plpgsql as
$$
declare
    bad record;
begin
    select n.merchant_id, n.merchant_seq, n.idx into bad
    from new_postings n
    cross join lateral (select a.merchant_id, a.currency from accounts a where a.id = n.source_id offset 0) s
    cross join lateral (select a.merchant_id, a.currency from accounts a where a.id = n.destination_id offset 0) d
    where s.merchant_id <> n.merchant_id or d.merchant_id <> n.merchant_id
       or s.currency <> n.currency or d.currency <> n.currency
    limit 1;
    if found then
        raise exception 'posting %/%/% crosses merchants or currencies', bad.merchant_id, bad.merchant_seq, bad.idx
            using errcode = 'check_violation', constraint = 'postings_accounts_check';
    end if;
    return null;
end
$$;

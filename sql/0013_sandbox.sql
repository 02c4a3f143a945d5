-- 0013: test merchants (docs/api.md, "The sandbox"). A test merchant drives
-- its own cards and remittances through the network and rail commands over
-- /shop/sandbox/...; a live merchant's sandbox paths do not exist. The flag
-- is set at creation and never changes: a merchant whose money was moved by
-- the sandbox must not become live (its balances would then look like real
-- money), nor a live one become a sandbox. Every account, the house
-- accounts included, already belongs to one merchant (docs/ledger.md), so a
-- test merchant's funding, card, network settlement, rail settlement, fee
-- and world accounts are its own and never a live merchant's.
alter table merchants add column test boolean not null default false;

create function merchants_test_unchanged() returns trigger language plpgsql as $$
begin
    if new.test is distinct from old.test then
        raise exception 'a merchant''s test flag cannot change'
            using errcode = 'check_violation', constraint = 'merchants_test_unchanged';
    end if;
    return new;
end $$;

create trigger merchants_test_unchanged before update of test on merchants
    for each row execute function merchants_test_unchanged();

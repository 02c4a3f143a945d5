-- The gateway's serving role, least privilege (issue 31, docs/security.md
-- "Database roles"). Migrations run as the owner of the tables; `serve`
-- connects as gateway_app, which may read and write the rows of the
-- gateway's tables and nothing else: no CREATE, ALTER, DROP or TRUNCATE (it
-- owns nothing and has no CREATE on the schema), not a superuser. The
-- journal's append-only triggers hold for it as for everyone.
--
-- The role belongs to the cluster, like gateway_auditor (sql/0006): another
-- database may be making it at this very moment. It is made NOLOGIN here; the
-- bootstrap that owns the cluster (ledger/pgcluster for `make run`, the
-- operator elsewhere) gives it LOGIN and a scram-sha-256 password.
do $$
begin
    if not exists (select 1 from pg_roles where rolname = 'gateway_app') then
        create role gateway_app nologin;
    end if;
exception
    when duplicate_object or unique_violation then
        null;
    when insufficient_privilege then
        raise exception 'the role gateway_app does not exist and this database user may not create roles'
            using errcode = 'insufficient_privilege',
                  hint = 'a superuser runs CREATE ROLE gateway_app LOGIN PASSWORD ''…'' once, then the migration again (docs/security.md)';
end
$$;

-- gateway_app_grant gives gateway_app the rows of every table and sequence
-- of the schema. It runs here and again after every migration run
-- (internal/database.Migrate), so a table a later migration adds is covered
-- even when that migration forgets its grant or runs as another role than
-- the default privileges below were set for. schema_migrations is the
-- migrator's: gateway_app only reads it (to see that nothing is pending).
create function gateway_app_grant() returns void
language plpgsql as $$
begin
    grant usage on schema public to gateway_app;
    grant select, insert, update, delete on all tables in schema public to gateway_app;
    grant usage, select, update on all sequences in schema public to gateway_app;
    if to_regclass('public.schema_migrations') is not null then
        revoke insert, update, delete on schema_migrations from gateway_app;
    end if;
end
$$;
select gateway_app_grant();

-- New tables of the role that migrates get the same rows-only grant.
alter default privileges in schema public
    grant select, insert, update, delete on tables to gateway_app;
alter default privileges in schema public
    grant usage, select, update on sequences to gateway_app;

-- 0017: audit anchors (issue 30). Accounts become append-only like the
-- journal, signed checkpoints of every merchant's head get a table of their
-- own, and auditors lose the temporary tables PUBLIC had. docs/audit.md is
-- the guide.

-- An account's identity (merchant, type, currency, card, and the address
-- the writer finds it by) is what every posting's hash commits to through
-- the account's id: changing it would move money between accounts without
-- touching a posting, and a changed address makes the writer open a second
-- account of the same identity (issue 30, finding 1). Nothing in the
-- gateway updates or deletes an account, so the identity columns are
-- refused like the journal's rows; created_at is informational and stays
-- writable.
create trigger accounts_append_only before update of id, merchant_id, type, currency, card_no, address or delete on accounts
    for each row execute function journal_refuse_change();
create trigger accounts_no_truncate before truncate on accounts
    for each statement execute function journal_refuse_change();

-- Signed checkpoints: every merchant's head (sequence, hash) at one moment,
-- one Merkle root over them (RFC 9162 style) and an Ed25519 signature over
-- the documented statement (internal/audit/checkpoint.go). The key is never
-- here: the table holds what was signed and the signature, so anyone with
-- the public key can check a stored checkpoint, and the file exported from
-- it is what an auditor keeps outside the database.
create table audit_checkpoints (
    id         bigint      generated always as identity constraint audit_checkpoints_pkey primary key,
    created_at timestamptz not null,
    key_id     text        not null,
    tree_size  bigint      not null constraint audit_checkpoints_tree_size_check check (tree_size >= 0),
    root       bytea       not null constraint audit_checkpoints_root_check check (length(root) = 32),
    heads      jsonb       not null,
    signed     bytea       not null,
    signature  bytea       not null constraint audit_checkpoints_signature_check check (length(signature) = 64)
);
create trigger audit_checkpoints_append_only before update or delete on audit_checkpoints
    for each row execute function journal_refuse_change();
create trigger audit_checkpoints_no_truncate before truncate on audit_checkpoints
    for each statement execute function journal_refuse_change();

grant select on audit_checkpoints to gateway_auditor;

-- docs/audit.md promised that an auditor creates nothing; PUBLIC has TEMP on
-- every database by default, so an auditor could create temporary tables
-- (issue 30, finding 4). The gateway uses none. Revoking needs the
-- database's owner (or a superuser): a user that is neither gets a warning
-- and the command for an administrator, not a failed migration.
do $$
begin
    execute format('revoke temporary on database %I from public', current_database());
    execute format('revoke temporary on database %I from gateway_auditor', current_database());
exception
    when insufficient_privilege then
        raise warning 'auditors may still create temporary tables: this database user does not own the database'
            using hint = format('an administrator runs REVOKE TEMPORARY ON DATABASE %I FROM PUBLIC once (docs/audit.md)', current_database());
end
$$;

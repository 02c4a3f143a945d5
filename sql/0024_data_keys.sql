-- The data key bound to its database (issue 31, point 2; docs/security.md,
-- "The data key"). The key itself is never here: data_key_binding holds its
-- fingerprint (a keyed hash, internal/merchant KeyFingerprint), written by
-- the first start that opens the database with a key; every later start,
-- serve or a command that opens sealed values, is refused unless its key
-- has the same fingerprint.
create table data_key_binding (
    singleton   boolean     not null default true constraint data_key_binding_pkey primary key
                            constraint data_key_binding_singleton_check check (singleton),
    fingerprint text        not null constraint data_key_binding_fingerprint_check check (fingerprint ~ '^[0-9a-f]{32}$'),
    bound_at    timestamptz not null default now()
);

-- The key versions that seal new values (`gateway datakey rotate` adds
-- one): random keys wrapped (sealed) under the data key. Version 0, the data
-- key itself, has no row. A version no row needs any more is retired: its
-- wrapped key is erased and the row stays as its history.
create table data_key_versions (
    version    integer     not null constraint data_key_versions_pkey primary key
                           constraint data_key_versions_version_check check (version between 1 and 65535),
    wrapped    bytea,
    created_at timestamptz not null default now(),
    retired_at timestamptz,
    constraint data_key_versions_retired_check check ((wrapped is null) = (retired_at is not null))
);

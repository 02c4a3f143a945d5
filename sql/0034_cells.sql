-- Cells (docs/scaling.md, "Cells"): merchants spread over several
-- PostgreSQL formations, nothing crossing between them. Every database gets
-- these tables; which rows it holds depends on its part:
--
--   cell_identity   one row in a database that `gateway cells init` made a
--                   cell: its name and number. The ids it mints carry the
--                   name; its merchant ids and PANs come from the number's
--                   ranges. Empty in a one-cell installation (the default),
--                   which mints exactly as before.
--   cell_registry,  the directory: filled only in the home cell (the first
--   cell_directory, of GATEWAY_CELLS), empty in every other database. Kept
--   cell_moves      in a cell rather than a database of its own, so that it
--                   is exactly as highly available, backed up and audited
--                   as a cell (docs/scaling.md says why that is as safe).
--
-- All four are internal/cells's. The move of a merchant (internal/cellmove)
-- records its moves in cell_moves and adds its tombstones in a table of
-- its own.
create table cell_identity (
    only_row   boolean     primary key default true constraint cell_identity_one_row check (only_row),
    name       text        not null constraint cell_identity_name_check check (name ~ '^[a-z][a-z0-9]$'),
    number     integer     not null constraint cell_identity_number_check check (number between 1 and 9),
    created_at timestamptz not null default now()
);

create table cell_registry (
    name       text        constraint cell_registry_pkey primary key constraint cell_registry_name_check check (name ~ '^[a-z][a-z0-9]$'),
    number     integer     not null constraint cell_registry_number_key unique
                           constraint cell_registry_number_check check (number between 1 and 9),
    created_at timestamptz not null default now()
);

-- One row per merchant: the shop number routes /shop requests, the
-- merchant id is unique across cells (each cell mints from its own range;
-- the key here checks it once more).
create table cell_directory (
    shop_no     text        constraint cell_directory_pkey primary key,
    merchant_id bigint      not null constraint cell_directory_merchant_key unique,
    cell        text        not null constraint cell_directory_cell_fkey references cell_registry (name),
    state       text        not null default 'active' constraint cell_directory_state_check check (state in ('active', 'moving')),
    updated_at  timestamptz not null default now()
);
create index cell_directory_cell_idx on cell_directory (cell);

create table cell_moves (
    id          bigint      generated always as identity constraint cell_moves_pkey primary key,
    shop_no     text        not null constraint cell_moves_shop_fkey references cell_directory (shop_no),
    from_cell   text        not null constraint cell_moves_from_fkey references cell_registry (name),
    to_cell     text        not null constraint cell_moves_to_fkey references cell_registry (name),
    started_at  timestamptz not null default now(),
    finished_at timestamptz,
    -- switched: the directory points at to_cell; rolled_back: it still
    -- points at from_cell. Null while the move runs.
    outcome     text        constraint cell_moves_outcome_check check (outcome in ('switched', 'rolled_back')),
    constraint cell_moves_cells_check check (from_cell <> to_cell),
    constraint cell_moves_finished_check check ((finished_at is null) = (outcome is null))
);
-- At most one unfinished move per merchant.
create unique index cell_moves_open_key on cell_moves (shop_no) where finished_at is null;

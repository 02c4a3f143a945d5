-- Forwarding of a moved merchant's network ids (issue 33; docs/scaling.md,
-- "Network messages of a moving merchant"). internal/cellmove owns it.
--
-- A card number and an authorization id carry the cell that minted them
-- (crd_<cell>…, auth_<cell>…), and the internal router sends a network
-- message there without a lookup. A merchant that moved away keeps its
-- ids, so its source cell keeps one row per id of the merchant's cards and
-- authorizations: written when the move pauses (to_cell null: the router
-- declines an authorization with 91 and holds the other messages with a
-- 503), given the target when the move switches, removed when the move is
-- rolled back or the merchant arrives back in this cell. The router reads
-- a cell's rows only while the cell has any.
create table cellmove_forwards (
    id      text   not null constraint cellmove_forwards_pkey primary key,
    move_id bigint not null,
    to_cell text
);
create index cellmove_forwards_move_idx on cellmove_forwards (move_id);

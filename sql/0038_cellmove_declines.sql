-- The authorizations declined during a move's pause (issue 33;
-- docs/network.md, "Authorization"; docs/scaling.md, "Network messages of
-- a moving merchant"). internal/cellmove owns it.
--
-- While a merchant's move is paused, the internal router declines an
-- authorization of its cards with 91 (issuer unavailable) without the
-- merchant's cell seeing it. An issuer keeps a log of what it declined or
-- stood in for, so each such decline is one row here, in the source cell
-- whose forwarding paused the card: written in the statement that reads
-- that forwarding (a row exists only for a card that was paused at that
-- moment), before the 91 is answered. move_id is the source's move
-- (cellmove_moves.id), which names the merchant; the row outlives the
-- merchant's removal from the source, as the move's own record does.
-- A network's repeat of the same message is recorded once.
create table cellmove_declines (
    move_id     bigint      not null,
    message_id  text        not null,
    card_no     text        not null,
    amount      bigint      not null constraint cellmove_declines_amount_check check (amount > 0),
    currency    text        not null constraint cellmove_declines_currency_check check (currency ~ '^[A-Z]{3}$'),
    code        text        not null default '91',
    declined_at timestamptz not null,
    constraint cellmove_declines_pkey primary key (move_id, message_id)
);

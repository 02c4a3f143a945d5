-- 0008: the reads of the network bounds (docs/network.md, "Bounds") as
-- index probes. A refund is matched against what the network captured on
-- its card and what it refunded before, read from the journal (the truth)
-- rather than from a counter that could drift: this index finds a card's
-- refunds without walking every other entry of the card. The second finds
-- a merchant's card receivables for GET /shop/account: a receivable account
-- exists only for a card that once owed something, so the probe reads
-- those few rows, not every account of the merchant.
create index entries_card_refund_idx on entries (card_no) where kind = 'CARD_REFUND';
create index accounts_card_receivable_idx on accounts (merchant_id, currency) where type = 'card_receivable';

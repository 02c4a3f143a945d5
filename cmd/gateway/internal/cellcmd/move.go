package cellcmd

import (
	"context"
	"fmt"

	"github.com/paygate/gateway/api"
	"github.com/paygate/gateway/internal/app"
	"github.com/paygate/gateway/internal/cellmove"
)

// DeclineView is one logged 91 decline of a move's pause as the operator
// reads it: the amount as a decimal of its currency.
type DeclineView struct {
	MoveID     int64  `json:"moveId"`
	ShopNo     string `json:"shopNo"`
	MessageID  string `json:"messageId"`
	CardNo     string `json:"cardNo"`
	Amount     any    `json:"amount"`
	Currency   string `json:"currency"`
	Code       string `json:"code"`
	DeclinedAt string `json:"declinedAt"`
}

// DeclineViews are ds as the operator reads them.
func DeclineViews(ds []cellmove.Decline) []DeclineView {
	out := make([]DeclineView, len(ds))
	for i, d := range ds {
		out[i] = DeclineView{MoveID: d.MoveID, ShopNo: d.ShopNo, MessageID: d.MessageID, CardNo: d.CardNo,
			Amount: api.Money(d.Amount, d.Currency), Currency: d.Currency, Code: d.Code, DeclinedAt: api.Timestamp(d.DeclinedAt)}
	}
	return out
}

// Declines are every cell's log of the authorizations declined 91 during
// a move's pause (cellmove.Declines), by cell: the merchant's with shopNo,
// or every merchant's with "".
func (e Env) Declines(ctx context.Context, shopNo string) (map[string]any, error) {
	return e.Each(ctx, func(l *app.Services) (any, error) {
		ds, err := cellmove.Declines(ctx, l.DB(), shopNo)
		return DeclineViews(ds), err
	})
}

// MoveView is what `gateway cells move` prints of a finished move: its
// figures and the declines of its pause.
func MoveView(res *cellmove.Result, from, to string) map[string]any {
	return map[string]any{"shopNo": res.ShopNo, "from": from, "to": to, "merchantId": res.Merchant,
		"rowsCopied": res.Rows, "pauseMs": res.Pause.Milliseconds(), "pause": res.Pause.String(), "resumed": res.Resumed,
		"copyMs": res.Copy.Milliseconds(), "tailMs": res.Tail.Milliseconds(), "verifyMs": res.Verify.Milliseconds(), "removeMs": res.Remove.Milliseconds(),
		"headSeq": res.Head.Seq, "headHash": fmt.Sprintf("%x", res.Head.Hash), "declined": DeclineViews(res.Declined)}
}

// URLMover is a mover between two databases' URLs with a local
// directory (`gateway cells move --from URL --to URL`).
func URLMover(ctx context.Context, from, to, fromName, toName string) (*cellmove.Mover, func(), error) {
	dbs, close, err := app.OpenMoveDBs(ctx, map[string]string{"--from": from, "--to": to})
	if err != nil {
		return nil, nil, err
	}
	return &cellmove.Mover{From: cellmove.Cell{Name: fromName, DB: dbs["--from"]}, To: cellmove.Cell{Name: toName, DB: dbs["--to"]},
		Dir: cellmove.NewLocalDirectory()}, close, nil
}

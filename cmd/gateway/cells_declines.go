package main

import (
	"context"

	"github.com/paygate/gateway/api"
	"github.com/paygate/gateway/internal/app"
	"github.com/paygate/gateway/internal/cellmove"
)

// declineView is one logged decline as the operator reads it: the amount
// as a decimal of its currency.
type declineView struct {
	MoveID     int64  `json:"moveId"`
	ShopNo     string `json:"shopNo"`
	MessageID  string `json:"messageId"`
	CardNo     string `json:"cardNo"`
	Amount     any    `json:"amount"`
	Currency   string `json:"currency"`
	Code       string `json:"code"`
	DeclinedAt string `json:"declinedAt"`
}

func declineViews(ds []cellmove.Decline) []declineView {
	out := make([]declineView, len(ds))
	for i, d := range ds {
		out[i] = declineView{MoveID: d.MoveID, ShopNo: d.ShopNo, MessageID: d.MessageID, CardNo: d.CardNo,
			Amount: api.Money(d.Amount, d.Currency), Currency: d.Currency, Code: d.Code, DeclinedAt: api.Timestamp(d.DeclinedAt)}
	}
	return out
}

// cmdCellsDeclines prints the authorizations the router declined 91
// because their card's merchant was in a move's pause, as each source
// cell logged them (docs/network.md, "Authorization"; docs/scaling.md).
func cmdCellsDeclines(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "cells declines", "Print the authorizations declined 91 during merchants' moves between cells (each cell's log, by cell).")
	shopNo := fs.String("shop-no", "", "only this merchant's (default: every merchant's)")
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	cfg, err := cellsConfig(e)
	if err != nil {
		return err
	}
	out, err := cellEnv(e, cfg).Each(ctx, func(l *app.Services) (any, error) {
		ds, err := cellmove.Declines(ctx, l.DB(), *shopNo)
		return declineViews(ds), err
	})
	if err != nil {
		return err
	}
	return printJSON(e, map[string]any{"cells": out})
}

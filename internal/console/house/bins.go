package house

import (
	"context"
	"net/http"
	"strings"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/console/host"
	"github.com/paygate/gateway/postings"
)

// The BIN catalogue for operators: the list, and a form that adds an entry
// or changes one's network and whether it is enabled, through the card
// domain's UpsertBIN (the CLI's bin add). Every field is checked here
// first, so that a refusal names it and keeps what was typed.

var binNetworks = []string{"VISA", "MASTERCARD"}

type binsData struct {
	BINs  []cards.BIN
	Nets  []string
	Saved bool
	Error string
	Value map[string]string // what was typed, shown again after a refusal
}

func (s *pages) bins(w http.ResponseWriter, r *http.Request, u *host.User) {
	s.renderBINs(w, r, http.StatusOK, binsData{Saved: r.URL.Query().Get("saved") == "1"})
}

func (s *pages) renderBINs(w http.ResponseWriter, r *http.Request, status int, d binsData) {
	all, err := s.d.Cards.BINs(r.Context())
	if err != nil {
		s.h.DomainError(w, r, err)
		return
	}
	d.BINs, d.Nets = all, binNetworks
	if d.Value == nil {
		d.Value = map[string]string{"network": "VISA", "enabled": "on"}
	}
	s.h.Render(w, r, status, "bins", "BIN catalogue", d)
}

// binUpsert adds or changes one entry.
func (s *pages) binUpsert(w http.ResponseWriter, r *http.Request, u *host.User) {
	v := map[string]string{"bin": strings.TrimSpace(r.PostFormValue("bin")), "currency": strings.ToUpper(strings.TrimSpace(r.PostFormValue("currency"))),
		"network": r.PostFormValue("network"), "enabled": r.PostFormValue("enabled")}
	refuse := func(msg string) { s.renderBINs(w, r, http.StatusBadRequest, binsData{Error: msg, Value: v}) }
	if b := v["bin"]; len(b) < 6 || len(b) > 8 || strings.Trim(b, "0123456789") != "" {
		refuse("bin: must be 6 to 8 digits")
		return
	}
	if c := v["currency"]; len(c) != 3 {
		refuse("currency: must be a three-letter ISO 4217 code")
		return
	} else if _, err := postings.LookupCurrency(c); err != nil {
		refuse("currency: " + c + " is not a currency the gateway holds")
		return
	}
	known := false
	for _, n := range binNetworks {
		known = known || n == v["network"]
	}
	if !known {
		refuse("network: must be VISA or MASTERCARD")
		return
	}
	if e := v["enabled"]; e != "" && e != "on" {
		refuse("enabled: must be on or absent")
		return
	}
	b := cards.BIN{Bin: v["bin"], Currency: v["currency"], Network: v["network"], Type: "VIRTUAL", Enabled: v["enabled"] == "on"}
	state := "enabled"
	if !b.Enabled {
		state = "disabled"
	}
	s.command(w, r, 0, "bin.upsert", b.Bin+"/"+b.Currency, b.Network+" "+state, "/operator/bins?saved=1",
		func(ctx context.Context) error { return s.d.Cards.UpsertBIN(ctx, b) },
		func(pe *postings.Error) { refuse(pe.Error()) })
}

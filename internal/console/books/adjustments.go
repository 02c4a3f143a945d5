package books

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/paygate/gateway/internal/adjustment"
	"github.com/paygate/gateway/internal/console/host"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/postings"
)

// Corrections in the console (issue 29 point 4; docs/console.md,
// "Adjustments"): the CLI's gateway adjustment list|propose|approve|reject
// for the house, on internal/adjustment (the same Service behind both).
// The acting house user is the session's: maker–checker compares console
// user ids, so the proposer cannot approve here either, nor from the CLI.
// Operators propose and decide; auditors read the list. Each step is a row
// of the console's audit trail under the CLI's action names
// (adjustment.propose, .approve, .reject), written ahead of the command
// (internal/console/audit_intent.go), its target "<shopNo> adjustment <id>" as the CLI's.

const adjustmentsPath = "/house/adjustments"

// amountBytesMax bounds the amount field before it is parsed, as the
// deposit form's.
const amountBytesMax = 32

// adjustmentListMax is how many proposals the page lists.
const adjustmentListMax = 100

type adjustmentsData struct {
	ShopNo string // the list's filter (empty: every merchant's)
	Before int64  // the page: ids below it (0: from the newest)
	Next   string // the next, older page's link ("" on the last page)
	Rows   []adjustmentRow
	CanAct bool
	Notice string
	Error  string
	Value  map[string]string // the propose form as typed
	Houses []postings.AccountType
}

type adjustmentRow struct {
	*adjustment.Proposal
	ShopNo string
	Open   bool // PROPOSED: may still be decided
	Own    bool // proposed by the session's user, who may not decide it (the store refuses; the page says so)
}

func (s *pages) adjustments(w http.ResponseWriter, r *http.Request, u *host.User) {
	d := adjustmentsData{ShopNo: r.URL.Query().Get("shopNo")}
	before, err := host.QueryInt(r, "before", 1, 1<<62, 0)
	if err != nil {
		s.h.DomainError(w, r, err)
		return
	}
	d.Before = int64(before)
	// The notice of the redirect after a step; the id shown only as a number.
	id, err := strconv.ParseInt(r.URL.Query().Get("id"), 10, 64) // only for the notice: a bad one shows none
	switch done := r.URL.Query().Get("done"); {
	case err == nil && id > 0 && (done == "propose" || done == "approve" || done == "reject"):
		d.Notice = "Adjustment " + strconv.FormatInt(id, 10) + ": " + map[string]string{"propose": "proposed; another house user approves or rejects it.",
			"approve": "approved; its ADJUSTMENT entry is posted.", "reject": "rejected; nothing moved."}[done]
	}
	var m *merchant.Merchant
	if d.ShopNo != "" {
		var msg string
		if m, msg, err = s.shopFilter(r, d.ShopNo); err != nil {
			s.h.DomainError(w, r, err)
			return
		} else if msg != "" {
			d.Error = msg
			s.renderAdjustments(w, r, u, http.StatusBadRequest, nil, d)
			return
		}
	}
	s.renderAdjustments(w, r, u, http.StatusOK, m, d)
}

// renderAdjustments lists m's proposals (nil: every merchant's) under d.
func (s *pages) renderAdjustments(w http.ResponseWriter, r *http.Request, u *host.User, status int, m *merchant.Merchant, d adjustmentsData) {
	d.CanAct, d.Houses = s.h.Allows(u, host.PermOperate), adjustment.HouseAccounts
	if d.Value == nil {
		d.Value = map[string]string{"shopNo": d.ShopNo, "mode": adjustment.ModeReversal}
	}
	var id int64
	if m != nil {
		id = m.ID
	}
	if status == http.StatusOK || m != nil {
		ps, err := s.d.Adjustments.List(r.Context(), id, d.Before, adjustmentListMax)
		if err != nil {
			s.h.DomainError(w, r, err)
			return
		}
		if len(ps) == adjustmentListMax {
			v := url.Values{"before": {strconv.FormatInt(ps[len(ps)-1].ID, 10)}}
			if d.ShopNo != "" {
				v.Set("shopNo", d.ShopNo)
			}
			d.Next = adjustmentsPath + "?" + v.Encode()
		}
		shops := shopNames{s: s, r: r}
		for _, p := range ps {
			shop, err := shops.of(p.Merchant)
			if err != nil {
				s.h.DomainError(w, r, err)
				return
			}
			d.Rows = append(d.Rows, adjustmentRow{Proposal: p, ShopNo: shop, Open: p.Status == adjustment.StatusProposed,
				Own: p.ProposedBy == u.Login}) // a login is unique (console_users_login_key)
		}
	}
	s.h.Render(w, r, status, "adjustments", "Adjustments", d)
}

// adjustmentForm reads the propose form into the domain's input, as the
// CLI reads its flags; msg names the field at fault.
func (s *pages) adjustmentForm(r *http.Request) (m *merchant.Merchant, in adjustment.ProposeInput, v map[string]string, msg string, err error) {
	v = map[string]string{}
	for _, k := range []string{"shopNo", "mode", "reverses", "houseAccount", "direction", "amount", "currency", "reason", "reference"} {
		v[k] = r.PostFormValue(k)
	}
	v["shopNo"], v["currency"] = strings.TrimSpace(v["shopNo"]), strings.ToUpper(strings.TrimSpace(v["currency"]))
	v["reverses"], v["amount"] = strings.TrimSpace(v["reverses"]), strings.TrimSpace(v["amount"])
	if v["shopNo"] == "" {
		return nil, in, v, "shopNo: required", nil
	}
	if m, msg, err = s.shopFilter(r, v["shopNo"]); m == nil {
		return nil, in, v, msg, err
	}
	in = adjustment.ProposeInput{Merchant: m.ID, Reason: v["reason"], Reference: v["reference"]}
	switch v["mode"] {
	case adjustment.ModeReversal:
		if in.Reverses, err = strconv.ParseInt(v["reverses"], 10, 64); err != nil || in.Reverses <= 0 {
			return m, in, v, "reverses: the merchant's entry to reverse, its seq (1 or more)", nil
		}
	case adjustment.ModeFree:
		in.House, in.Direction, in.Currency = v["houseAccount"], v["direction"], v["currency"]
		cur, cerr := postings.LookupCurrency(in.Currency)
		if cerr != nil || len(in.Currency) != 3 {
			return m, in, v, "currency: " + strconv.Quote(host.Clip(in.Currency, 8)) + " is not a currency the gateway holds", nil
		}
		if v["amount"] == "" || len(v["amount"]) > amountBytesMax {
			return m, in, v, "amount: required, a decimal in " + cur.Code + " such as 10.00", nil
		}
		if in.Amount, cerr = postings.ParseAmount(v["amount"], cur); cerr != nil {
			return m, in, v, "amount: " + postings.AsError(cerr).Message, nil
		}
	default:
		return m, in, v, "mode: must be reversal or free", nil
	}
	return m, in, v, "", nil
}

// adjustmentPropose proposes a correction as the session's user.
func (s *pages) adjustmentPropose(w http.ResponseWriter, r *http.Request, u *host.User) {
	m, in, v, msg, err := s.adjustmentForm(r)
	if err != nil {
		s.h.DomainError(w, r, err)
		return
	}
	refuse := func(msg string) {
		s.renderAdjustments(w, r, u, http.StatusBadRequest, m, adjustmentsData{ShopNo: v["shopNo"], Error: msg, Value: v})
	}
	if msg != "" {
		refuse(msg)
		return
	}
	// The target waits for the id (the row's target is set once, when
	// empty: store.ResolveAudit).
	a, ok := s.h.Begin(w, r, m.ID, "adjustment.propose", "", "reason "+in.Reason+", reference "+in.Reference)
	if !ok {
		return
	}
	p, err := s.d.Adjustments.Propose(r.Context(), actorOf(u), in)
	if err != nil {
		a.Finish(err, 0, m.ShopNo, "")
		if postings.ErrorCode(err) == postings.EINVALID {
			refuse(host.FieldMessage(err))
			return
		}
		s.h.DomainError(w, r, err)
		return
	}
	a.Finish(nil, 0, adjustmentTarget(m, p.ID), "")
	s.adjustmentDone(w, r, m, "propose", p.ID)
}

// adjustmentDecide approves or rejects a proposal of the merchant the
// form names: another merchant's id is the domain's ENOTFOUND, the one 404
// of an unknown id; the proposer's own decision is the domain's refusal.
func (s *pages) adjustmentDecide(w http.ResponseWriter, r *http.Request, u *host.User) {
	decision := r.PathValue("decision")
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if (decision != "approve" && decision != "reject") || err != nil || id <= 0 {
		s.h.NotFound(w, r)
		return
	}
	m, msg, err := s.shopFilter(r, strings.TrimSpace(r.PostFormValue("shopNo")))
	switch {
	case err != nil:
		s.h.DomainError(w, r, err)
		return
	case msg != "":
		s.h.NotFound(w, r) // the form's hidden field: not a merchant, no such proposal
		return
	}
	a, ok := s.h.Begin(w, r, m.ID, "adjustment."+decision, adjustmentTarget(m, id), "")
	if !ok {
		return
	}
	run := s.d.Adjustments.Reject
	if decision == "approve" {
		run = s.d.Adjustments.Approve
	}
	p, err := run(r.Context(), actorOf(u), m.ID, id)
	if err != nil {
		a.Finish(err, 0, "", "")
		s.h.DomainError(w, r, err)
		return
	}
	more := ""
	if p.EntrySeq != 0 {
		more = "entry seq " + strconv.FormatInt(p.EntrySeq, 10)
	}
	a.Finish(nil, 0, "", more)
	s.adjustmentDone(w, r, m, decision, id)
}

func actorOf(u *host.User) adjustment.Actor {
	return adjustment.Actor{UserID: u.ID, Login: u.Login}
}

// adjustmentTarget is the trail's target, as the CLI writes it.
func adjustmentTarget(m *merchant.Merchant, id int64) string {
	return m.ShopNo + " adjustment " + strconv.FormatInt(id, 10)
}

// adjustmentDone sends the browser back to the merchant's list (POST,
// redirect, GET) with a notice of what was done.
func (s *pages) adjustmentDone(w http.ResponseWriter, r *http.Request, m *merchant.Merchant, done string, id int64) {
	q := url.Values{"shopNo": {m.ShopNo}, "done": {done}, "id": {strconv.FormatInt(id, 10)}}
	http.Redirect(w, r, adjustmentsPath+"?"+q.Encode(), http.StatusSeeOther)
}

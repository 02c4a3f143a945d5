package console

import (
	"net/http"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/console/host"
	"github.com/paygate/gateway/postings"
)

// A merchant's pages. Every read and command takes the merchant from the
// session, never from the URL: another merchant's card is unknown here,
// with the same 404 page as a card that does not exist.

var (
	cardNoRE = regexp.MustCompile(`^crd_[a-z0-9]{20}$`)
	last4RE  = regexp.MustCompile(`^[0-9]{4}$`)
)

type balancesData struct {
	Balances []cards.FundingBalance
	Charts   []chart
	From, To time.Time
	Volume   []volumeDay
}

// volumeDays is how many days the balances page charts.
const volumeDays = 30

func (s *Server) balances(w http.ResponseWriter, r *http.Request, sess *session) {
	ctx := r.Context()
	p, err := s.cfg.Cards.Profile(ctx, sess.user.MerchantID)
	if err != nil {
		s.domainError(w, r, err)
		return
	}
	today := s.now().Truncate(24 * time.Hour)
	from, to := today.AddDate(0, 0, -(volumeDays-1)), today.AddDate(0, 0, 1)
	vol, err := s.dailyVolume(ctx, sess.user.MerchantID, from, to)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "balances", "Balances", balancesData{Balances: p.Balances,
		Charts: volumeCharts(vol, from, volumeDays), From: from, To: today, Volume: vol})
}

type cardsData struct {
	Q, Status string
	Cards     []*cards.Card
}

func (s *Server) cardList(w http.ResponseWriter, r *http.Request, sess *session) {
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	status := r.URL.Query().Get("status")
	if q != "" && !cardNoRE.MatchString(q) && !last4RE.MatchString(q) {
		s.fail(w, r, http.StatusBadRequest, "q: give a whole card number (crd_…) or its last four digits")
		return
	}
	if status != "" && status != cards.CardActive && status != cards.CardFrozen && status != cards.CardCancelled {
		s.fail(w, r, http.StatusBadRequest, "status: must be ACTIVE, FROZEN or CANCELLED")
		return
	}
	ctx := r.Context()
	nos, err := s.cfg.Cards.Search(ctx, sess.user.MerchantID, q, status, cardsPageMax)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	d := cardsData{Q: q, Status: status}
	if len(nos) > 0 {
		m, err := s.cfg.Cards.Cards(ctx, sess.user.MerchantID, nos)
		if err != nil {
			s.domainError(w, r, err)
			return
		}
		for _, no := range nos {
			if c := m[no]; c != nil {
				d.Cards = append(d.Cards, c)
			}
		}
	}
	s.render(w, r, http.StatusOK, "cards", "Cards", d)
}

// cardOf reads the session merchant's card named in the URL; false after
// answering 404 (a malformed number, an unknown card, another merchant's).
func (s *Server) cardOf(w http.ResponseWriter, r *http.Request, sess *session) (*cards.Card, bool) {
	no := r.PathValue("cardNo")
	if !cardNoRE.MatchString(no) {
		s.notFound(w, r)
		return nil, false
	}
	c, err := s.cfg.Cards.Card(r.Context(), sess.user.MerchantID, no)
	if err != nil {
		s.domainError(w, r, err)
		return nil, false
	}
	return c, true
}

type cardData struct {
	Card    *cards.Card
	Action  string // the action to confirm, on the confirmation page
	CanEdit bool
}

func (s *Server) card(w http.ResponseWriter, r *http.Request, sess *session) {
	c, ok := s.cardOf(w, r, sess)
	if !ok {
		return
	}
	s.render(w, r, http.StatusOK, "card", "Card "+c.CardNo, cardData{Card: c, CanEdit: sess.user.Role.may(permCardWrite)})
}

// cardActions are the card commands a merchant admin may confirm.
var cardActions = map[string]bool{"freeze": true, "unfreeze": true, "cancel": true}

// confirmCard shows the confirmation form of a card action: the action is
// only taken by its POST, so a link followed by mistake changes nothing.
func (s *Server) confirmCard(w http.ResponseWriter, r *http.Request, sess *session) {
	action := r.PathValue("action")
	if !cardActions[action] {
		s.notFound(w, r)
		return
	}
	c, ok := s.cardOf(w, r, sess)
	if !ok {
		return
	}
	s.render(w, r, http.StatusOK, "confirm", "Confirm: "+action+" "+c.CardNo, cardData{Card: c, Action: action})
}

// freezeReasonMax is the bound of a freeze reason in characters, the API's
// (reasonCharsMax).
const freezeReasonMax = 255

// cardAction runs a card command through the card domain, as the API does.
func (s *Server) cardAction(w http.ResponseWriter, r *http.Request, sess *session) {
	action := r.PathValue("action")
	if !cardActions[action] {
		s.notFound(w, r)
		return
	}
	no := r.PathValue("cardNo")
	if !cardNoRE.MatchString(no) {
		s.notFound(w, r)
		return
	}
	reason := strings.TrimSpace(r.PostFormValue("reason"))
	// The API's rule of a freeze reason (api/card_action.go), from its one
	// home; the door (formtext.go) has checked it already.
	if err := postings.CheckText("reason", reason, freezeReasonMax); err != nil {
		s.fail(w, r, http.StatusBadRequest, host.FieldMessage(err))
		return
	}
	a, ok := s.auditBegin(w, r, sess, 0, "card."+action, no, reason) // audit_intent.go
	if !ok {
		return
	}
	ctx, m := r.Context(), sess.user.MerchantID
	var err error
	switch action {
	case "freeze":
		_, err = s.cfg.Cards.FreezeCard(ctx, m, no, reason, nil)
	case "unfreeze":
		_, err = s.cfg.Cards.UnfreezeCard(ctx, m, no, nil)
	case "cancel":
		_, err = s.cfg.Cards.CancelCard(ctx, m, no, nil)
	}
	a.Finish(err, 0, "", "")
	if err != nil {
		s.domainError(w, r, err)
		return
	}
	http.Redirect(w, r, "/cards/"+no, http.StatusSeeOther)
}

// sortedCurrencies lists the currencies of the volume rows in order.
func sortedCurrencies(vol []volumeDay) []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range vol {
		if !seen[v.Currency] {
			seen[v.Currency] = true
			out = append(out, v.Currency)
		}
	}
	sort.Strings(out)
	return out
}

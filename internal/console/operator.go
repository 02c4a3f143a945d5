package console

import (
	"github.com/paygate/gateway/internal/console/host"

	"net/http"
	"strconv"
	"strings"

	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/postings"
)

// The operator's pages: merchants (list, create, disable and enable, with
// the ledger's commands the CLI runs) and the callbacks and remittances
// that are stuck. FX rates are operator_rates.go's.

type merchantsData struct {
	Merchants []merchantRow
	Next      string
	Created   *merchant.Credentials // shown once, right after creation
}

func (s *Server) merchantList(w http.ResponseWriter, r *http.Request, sess *session) {
	after, err := host.QueryInt(r, "after", 0, 1<<30, 0)
	if err != nil {
		s.domainError(w, r, err)
		return
	}
	ms, err := s.merchants(r.Context(), int64(after))
	if err != nil {
		s.internal(w, r, err)
		return
	}
	d := merchantsData{Merchants: ms}
	if len(ms) == merchantsPageMax {
		d.Next = "/operator/merchants?after=" + strconv.FormatInt(ms[len(ms)-1].ID, 10)
	}
	s.render(w, r, http.StatusOK, "merchants", "Merchants", d)
}

// merchantCreate runs the ledger's CreateMerchant (the CLI's merchant
// create) and shows the credentials once.
func (s *Server) merchantCreate(w http.ResponseWriter, r *http.Request, sess *session) {
	name := strings.TrimSpace(r.PostFormValue("name"))
	if name == "" || len(name) > 200 || host.HasControl(name) {
		s.fail(w, r, http.StatusBadRequest, "name: 1 to 200 bytes, without control characters")
		return
	}
	var curs []string
	for _, c := range strings.Split(r.PostFormValue("currencies"), ",") {
		if c = strings.ToUpper(strings.TrimSpace(c)); c != "" {
			curs = append(curs, c)
		}
	}
	if len(curs) == 0 || len(curs) > 32 {
		s.fail(w, r, http.StatusBadRequest, "currencies: 1 to 32 ISO 4217 codes, comma-separated")
		return
	}
	for _, c := range curs {
		if _, err := postings.LookupCurrency(c); err != nil {
			s.fail(w, r, http.StatusBadRequest, "currencies: "+clip(c, 8)+" is not a currency the gateway holds")
			return
		}
	}
	// The shop number is the command's: the pending row has none yet, its
	// outcome fills it in (audit_intent.go).
	a, ok := s.auditBegin(w, r, sess, 0, "merchant.create", "", name+" "+strings.Join(curs, ","))
	if !ok {
		return
	}
	m, creds, err := s.cfg.Merchants.CreateMerchant(r.Context(), merchant.Spec{Name: name, Currencies: curs})
	if err != nil {
		a.finish(err, 0, "", "")
		s.domainError(w, r, err)
		return
	}
	a.finish(nil, m.ID, m.ShopNo, "")
	ms, err := s.merchants(r.Context(), 0)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "merchants", "Merchants", merchantsData{Merchants: ms, Created: creds})
}

// merchantStatus disables or enables a merchant (the CLI's merchant
// disable and enable).
func (s *Server) merchantStatus(w http.ResponseWriter, r *http.Request, sess *session) {
	shop := r.PathValue("shopNo")
	if len(shop) > 64 || !postings.IsRefText(shop) {
		s.notFound(w, r)
		return
	}
	status := map[string]string{"disable": merchant.Disabled, "enable": merchant.Active}[r.PathValue("action")]
	if status == "" {
		s.notFound(w, r)
		return
	}
	m, err := s.cfg.Merchants.MerchantByShopNo(r.Context(), shop)
	if err != nil {
		s.domainError(w, r, err)
		return
	}
	a, ok := s.auditBegin(w, r, sess, m.ID, "merchant."+r.PathValue("action"), shop, "") // audit_intent.go
	if !ok {
		return
	}
	err = s.cfg.Merchants.SetMerchantStatus(r.Context(), m.ID, status)
	a.finish(err, 0, "", "")
	if err != nil {
		s.domainError(w, r, err)
		return
	}
	if status == merchant.Disabled {
		if err := s.store.EndMerchantSessions(r.Context(), m.ID); err != nil {
			s.internal(w, r, err)
			return
		}
	}
	http.Redirect(w, r, "/operator/merchants", http.StatusSeeOther)
}

type stuckData struct {
	Callbacks, Remittances []stuckItem
}

func (s *Server) stuck(w http.ResponseWriter, r *http.Request, sess *session) {
	cb, err := s.stuckCallbacks(r.Context())
	if err != nil {
		s.internal(w, r, err)
		return
	}
	rm, err := s.stuckRemittances(r.Context(), s.now())
	if err != nil {
		s.internal(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "stuck", "Stuck work", stuckData{Callbacks: cb, Remittances: rm})
}

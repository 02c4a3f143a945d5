package house

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/paygate/gateway/internal/console/host"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/postings"
)

// The operator's pages: merchants (list, create, disable and enable, with
// the ledger's commands the CLI runs) and the callbacks and remittances
// that are stuck. FX rates are rates.go's.

type merchantsData struct {
	Merchants []merchantRow
	Next      string
	Created   *merchant.Credentials // shown once, right after creation
}

func (s *pages) merchantList(w http.ResponseWriter, r *http.Request, u *host.User) {
	after, err := host.QueryInt(r, "after", 0, 1<<62, 0)
	if err != nil {
		s.h.DomainError(w, r, err)
		return
	}
	ms, err := s.merchants(r.Context(), int64(after))
	if err != nil {
		s.h.Internal(w, r, err)
		return
	}
	d := merchantsData{Merchants: ms}
	if len(ms) == merchantsPageMax {
		d.Next = "/operator/merchants?after=" + strconv.FormatInt(ms[len(ms)-1].ID, 10)
	}
	s.h.Render(w, r, http.StatusOK, "merchants", "Merchants", d)
}

// merchantCreate runs the ledger's CreateMerchant (the CLI's merchant
// create) and shows the credentials once.
func (s *pages) merchantCreate(w http.ResponseWriter, r *http.Request, u *host.User) {
	name := strings.TrimSpace(r.PostFormValue("name"))
	if name == "" || len(name) > 200 || host.HasControl(name) {
		s.h.Fail(w, r, http.StatusBadRequest, "name: 1 to 200 bytes, without control characters")
		return
	}
	var curs []string
	for _, c := range strings.Split(r.PostFormValue("currencies"), ",") {
		if c = strings.ToUpper(strings.TrimSpace(c)); c != "" {
			curs = append(curs, c)
		}
	}
	if len(curs) == 0 || len(curs) > 32 {
		s.h.Fail(w, r, http.StatusBadRequest, "currencies: 1 to 32 ISO 4217 codes, comma-separated")
		return
	}
	for _, c := range curs {
		if _, err := postings.LookupCurrency(c); err != nil {
			s.h.Fail(w, r, http.StatusBadRequest, "currencies: "+host.Clip(c, 8)+" is not a currency the gateway holds")
			return
		}
	}
	// The shop number is the command's: the pending row has none yet, its
	// outcome fills it in (internal/console/audit_intent.go).
	a, ok := s.h.Begin(w, r, 0, "merchant.create", "", name+" "+strings.Join(curs, ","))
	if !ok {
		return
	}
	m, creds, err := s.d.Merchants.CreateMerchant(r.Context(), merchant.Spec{Name: name, Currencies: curs})
	if err != nil {
		a.Finish(err, 0, "", "")
		s.h.DomainError(w, r, err)
		return
	}
	a.Finish(nil, m.ID, m.ShopNo, "")
	ms, err := s.merchants(r.Context(), 0)
	if err != nil {
		s.h.Internal(w, r, err)
		return
	}
	s.h.Render(w, r, http.StatusOK, "merchants", "Merchants", merchantsData{Merchants: ms, Created: creds})
}

// merchantStatus disables or enables a merchant (the CLI's merchant
// disable and enable).
func (s *pages) merchantStatus(w http.ResponseWriter, r *http.Request, u *host.User) {
	shop := r.PathValue("shopNo")
	if len(shop) > 64 || !postings.IsRefText(shop) {
		s.h.NotFound(w, r)
		return
	}
	status := map[string]string{"disable": merchant.Disabled, "enable": merchant.Active}[r.PathValue("action")]
	if status == "" {
		s.h.NotFound(w, r)
		return
	}
	m, err := s.d.Merchants.MerchantByShopNo(r.Context(), shop)
	if err != nil {
		s.h.DomainError(w, r, err)
		return
	}
	a, ok := s.h.Begin(w, r, m.ID, "merchant."+r.PathValue("action"), shop, "") // audit_intent.go
	if !ok {
		return
	}
	err = s.d.Merchants.SetMerchantStatus(r.Context(), m.ID, status)
	a.Finish(err, 0, "", "")
	if err != nil {
		s.h.DomainError(w, r, err)
		return
	}
	if status == merchant.Disabled {
		if err := s.d.Console.EndMerchantSessions(r.Context(), m.ID); err != nil {
			s.h.Internal(w, r, err)
			return
		}
	}
	http.Redirect(w, r, "/operator/merchants", http.StatusSeeOther)
}

type stuckData struct {
	Callbacks, Remittances []stuckItem
}

func (s *pages) stuck(w http.ResponseWriter, r *http.Request, u *host.User) {
	cb, err := s.stuckCallbacks(r.Context())
	if err != nil {
		s.h.Internal(w, r, err)
		return
	}
	rm, err := s.stuckRemittances(r.Context(), s.h.Now())
	if err != nil {
		s.h.Internal(w, r, err)
		return
	}
	s.h.Render(w, r, http.StatusOK, "stuck", "Stuck work", stuckData{Callbacks: cb, Remittances: rm})
}

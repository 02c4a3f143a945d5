package sim

import (
	"strings"

	"github.com/paygate/gateway/internal/remittance/rules"
	"github.com/paygate/gateway/postings"
)

// Beneficiary names of the classes issue 27 found screening blind to,
// drawn from the seed for the remittances the simulation creates. Each
// draw is checked against the rules a name meets at the door and at
// screening, in pure Go: a name with a default-ignorable code point (the
// Hangul fillers and the rest of the class) is refused naming
// beneficiary.name; a listed name disguised by small capitals, modifier
// letters or superscripts hits its entry; an ordinary name in any script
// passes and hits nothing. The remittance is then created under the drawn
// name when the door accepts it, so that these names also travel through
// the domain and the database.

// simSanctions is the list the drawn names are screened against.
var simSanctions = func() *rules.SanctionsList {
	l, err := rules.ParseSanctionsList(strings.NewReader("name,country\nIvan Petrov,\nOcean Star Shipping,\n"))
	if err != nil {
		panic(err)
	}
	return l
}()

// simNameParts are the pieces the names are made of, by class.
var (
	simInvisible = []string{"\u3164", "\u115F", "\u1160", "\uFFA0", "\u034F", "\u180B", "\uFE0F", "\U000E0041",
		"\u17B4", "\u200D", "\u00AD", "\u2060", "\U0001BCA0", "\U000E0100"}
	simDisguised = []string{"ɪᴠᴀɴ ᴘᴇᴛʀᴏᴠ", "\uA7AEᴠᴀɴ ᴘᴇᴛʀᴏᴠ", "Ivan\u02CCPetrov", "Iv\u02CCan Petrov", "ᴏᴄᴇᴀɴ ꜱᴛᴀʀ ꜱʜɪᴘᴘɪɴɢ",
		"Ocean\u02D0Star Shipping", "ᴵᵛᵃⁿ ᴾᵉᵗʳᵒᵛ", "IVAN PETROV", "Іvan Реtrov"}
	simOrdinary = []string{"Hans Muster GmbH", "Иван Сидоров", "佐藤太郎", "김민준", "محمد علي", "Nguyễn Văn An",
		"Søren Kierkegaard", "राम शर्मा", "Γιάννης Παπαδόπουλος", "Ivana Petrović"}
)

// remitName draws a beneficiary name, checks it against the door and the
// list, and returns the name to create the remittance under.
func (s *sim) remitName() string {
	switch r := s.rng.IntN(100); {
	case r < 15:
		base := simDisguised[s.rng.IntN(len(simDisguised))]
		runes := []rune(base)
		at := 1 + s.rng.IntN(len(runes)-1) // inside the name: surrounding ones are trimmed first
		name := string(runes[:at]) + simInvisible[s.rng.IntN(len(simInvisible))] + string(runes[at:])
		req := rules.RemittanceRequest{PayerID: "payer-1", Beneficiary: rules.Beneficiary{Name: name, Country: "DE",
			AccountNo: "DE89370400440532013000"}, Amount: 100, Currency: "EUR"}
		_, err := rules.ValidateRemittance(&req)
		if e := postings.AsError(err); err == nil || e.Field != "beneficiary.name" {
			s.fail("name %+q with a default-ignorable: validation %v, want a refusal naming beneficiary.name", name, err)
		}
		if hit, _ := simSanctions.Screen(name, "DE"); !hit {
			s.fail("name %+q with a default-ignorable: screening missed it", name)
		}
	case r < 35:
		name := simDisguised[s.rng.IntN(len(simDisguised))]
		if hit, _ := simSanctions.Screen(name, "DE"); !hit {
			s.fail("disguised listed name %+q: screening missed it", name)
		}
		return name
	case r < 55:
		name := simOrdinary[s.rng.IntN(len(simOrdinary))]
		if hit, entry := simSanctions.Screen(name, "DE"); hit {
			s.fail("ordinary name %q hit %s", name, entry)
		}
		return name
	}
	return "Hans Muster GmbH"
}

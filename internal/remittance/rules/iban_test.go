package rules

import (
	"math/big"
	"strings"
	"testing"

	"github.com/paygate/gateway/postings"
)

// Real-format IBANs: the examples of the SWIFT IBAN registry and the usual
// test IBANs of each country.
var validIBANs = []string{
	"AD1200012030200359100100",
	"AE070331234567890123456",
	"AL47212110090000000235698741",
	"AT611904300234573201",
	"AZ21NABZ00000000137010001944",
	"BA391290079401028494",
	"BE68539007547034",
	"BG80BNBG96611020345678",
	"BH67BMAG00001299123456",
	"CH9300762011623852957",
	"CR05015202001026284066",
	"CY17002001280000001200527600",
	"CZ6508000000192000145399",
	"DE89370400440532013000",
	"DK5000400440116243",
	"DO28BAGR00000001212453611324",
	"EE382200221020145685",
	"ES9121000418450200051332",
	"FI2112345600000785",
	"FO6264600001631634",
	"FR1420041010050500013M02606",
	"GB29NWBK60161331926819",
	"GE29NB0000000101904917",
	"GI75NWBK000000007099453",
	"GL8964710001000206",
	"GR1601101250000000012300695",
	"HR1210010051863000160",
	"HU42117730161111101800000000",
	"IE29AIBK93115212345678",
	"IL620108000000099999999",
	"IS140159260076545510730339",
	"IT60X0542811101000000123456",
	"JO94CBJO0010000000000131000302",
	"KW81CBKU0000000000001234560101",
	"KZ86125KZT5004100100",
	"LB62099900000001001901229114",
	"LI21088100002324013AA",
	"LT121000011101001000",
	"LU280019400644750000",
	"LV80BANK0000435195001",
	"MC5811222000010123456789030",
	"MD24AG000225100013104168",
	"ME25505000012345678951",
	"MK07250120000058984",
	"MR1300020001010000123456753",
	"MT84MALT011000012345MTLCAST001S",
	"MU17BOMM0101101030300200000MUR",
	"NL91ABNA0417164300",
	"NO9386011117947",
	"PK36SCBL0000001123456702",
	"PL61109010140000071219812874",
	"PS92PALS000000000400123456702",
	"PT50000201231234567890154",
	"QA58DOHB00001234567890ABCDEFG",
	"RO49AAAA1B31007593840000",
	"RS35260005601001611379",
	"SA0380000000608010167519",
	"SC18SSCB11010000000000001497USD",
	"SE4550000000058398257466",
	"SI56263300012039086",
	"SK3112000000198742637541",
	"SM86U0322509800000000270100",
	"TL380080012345678910157",
	"TN5910006035183598478831",
	"TR330006100519786457841326",
	"UA213223130000026007233566001",
	"VA59001123000012345678",
	"VG96VPVG0000012345678901",
	"XK051212012345678906",
}

// bigMod97 is an independent MOD 97-10 over math/big, for the tests.
func bigMod97(s string) int64 {
	r := s[4:] + s[:4]
	var digits strings.Builder
	for i := 0; i < len(r); i++ {
		c := r[i]
		if c >= 'A' && c <= 'Z' {
			digits.WriteString(itoa2(int(c-'A') + 10))
		} else {
			digits.WriteByte(c)
		}
	}
	n, ok := new(big.Int).SetString(digits.String(), 10)
	if !ok {
		return -1
	}
	return new(big.Int).Mod(n, big.NewInt(97)).Int64()
}

func itoa2(n int) string { return string([]byte{byte('0' + n/10), byte('0' + n%10)}) }

// makeIBAN builds a valid IBAN of country cc from its registry structure.
func makeIBAN(cc string, seed int) string {
	var bban strings.Builder
	i := seed
	for _, s := range ibanStructures[cc] {
		for j := 0; j < s.n; j++ {
			i++
			switch s.class {
			case 'n':
				bban.WriteByte(byte('0' + i%10))
			case 'a':
				bban.WriteByte(byte('A' + i%26))
			default:
				bban.WriteByte("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"[i%36])
			}
		}
	}
	return withCheckDigits(cc, bban.String())
}

func withCheckDigits(cc, bban string) string {
	check := 98 - bigMod97(cc+"00"+bban)
	return cc + itoa2(int(check)) + bban
}

func TestIBANRegistryConsistent(t *testing.T) {
	if len(ibanRegistry) != 89 {
		t.Errorf("registry has %d countries, the December 2024 release 89", len(ibanRegistry))
	}
	for cc, spec := range ibanRegistry {
		segs, total, ok := parseBBANFormat(spec.bban)
		if !ok || total+4 != spec.length || len(segs) == 0 {
			t.Errorf("%s: BBAN %s gives %d characters, length says %d", cc, spec.bban, total+4, spec.length)
		}
		if !IsCountryCode(cc) {
			t.Errorf("%s is not in the country table", cc)
		}
	}
	for terr, parent := range ibanTerritories {
		if _, ok := ibanRegistry[parent]; !ok || !IsCountryCode(terr) {
			t.Errorf("territory %s → %s is broken", terr, parent)
		}
		if _, own := ibanRegistry[terr]; own {
			t.Errorf("territory %s also has its own registry row", terr)
		}
	}
	for _, bad := range []string{"", "8n", "8!x", "0!n", "8!", "!n", "123!n"} {
		if _, _, ok := parseBBANFormat(bad); ok {
			t.Errorf("parseBBANFormat(%q) accepted", bad)
		}
	}
}

func TestValidateIBANExamples(t *testing.T) {
	seen := map[string]bool{}
	for _, iban := range validIBANs {
		if err := ValidateIBAN(iban); err != nil {
			t.Errorf("%s refused: %v", iban, err)
		}
		if got := bigMod97(iban); got != 1 {
			t.Errorf("%s: independent mod 97 = %d", iban, got)
		}
		seen[iban[:2]] = true
	}
	// Every registry country accepts an IBAN built from its structure, and
	// refuses it with one character changed.
	for cc := range ibanRegistry {
		for seed := 0; seed < 5; seed++ {
			iban := makeIBAN(cc, seed)
			if err := ValidateIBAN(iban); err != nil {
				t.Errorf("%s: generated %s refused: %v", cc, iban, err)
				continue
			}
			last := iban[len(iban)-1]
			swapped := iban[:len(iban)-1] + string(map[bool]byte{true: '1', false: '0'}[last == '0'])
			if isUpper(last) {
				swapped = iban[:len(iban)-1] + string(map[bool]byte{true: 'B', false: 'A'}[last == 'A'])
			}
			if ValidateIBAN(swapped) == nil {
				t.Errorf("%s: %s accepted with its last character changed", cc, swapped)
			}
		}
	}
}

func TestValidateIBANRefusals(t *testing.T) {
	tests := []struct{ name, iban, want string }{
		{"bad checksum", "DE89370400440532013001", "checksum"},
		{"transposed digits", "DE89370400440532031000", "checksum"},
		{"too short for DE", "DE8937040044053201300", "22 characters"},
		{"too long for DE", "DE893704004405320130000", "22 characters"},
		{"lower case", "de89370400440532013000", "upper-case"},
		{"spaces", "DE89 3704 0044 0532 0130 00", "without spaces"},
		{"not in registry", "US12345678901234567", "IBAN registry"},
		{"empty", "", "15 to 34"},
		{"too long overall", strings.Repeat("1", 35), "15 to 34"},
		{"letter where digits", "DE89370400440532O13000", "format"},
		{"check digits 00", "GB00NWBK60161331926819", "02..98"},
		{"check digits 99", "GB99NWBK60161331926819", "02..98"},
		{"check letters", "GBAANWBK60161331926819", "check digits"},
		{"GB bank code digits", withCheckDigits("GB", "1234"+"60161331926819"), "format"},
		{"unicode", "DE89370400440532013ü0", "upper-case"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateIBAN(tt.iban)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("ValidateIBAN(%q) = %v, want %q", tt.iban, err, tt.want)
			}
			if e := postings.AsError(err); e.Code != postings.EINVALID || e.Field != "" {
				t.Fatalf("error %+v: want EINVALID without a field", e)
			}
		})
	}
}

func TestIBANLengthAndFormat(t *testing.T) {
	for cc, want := range map[string]int{"DE": 22, "GB": 22, "FR": 27, "AE": 23, "NO": 15, "LC": 32, "JE": 22, "RE": 27, "AX": 18, "US": 0, "IN": 0, "CN": 0} {
		if got := IBANLength(cc); got != want {
			t.Errorf("IBANLength(%s) = %d, want %d", cc, got, want)
		}
	}
	if got := ibanFormatRegexp("DE"); got != "^DE[0-9]{2}[0-9]{8}[0-9]{10}$" {
		t.Errorf("DE format %s", got)
	}
	if got := ibanFormatRegexp("GB"); got != "^GB[0-9]{2}[A-Z]{4}[0-9]{6}[0-9]{8}$" {
		t.Errorf("GB format %s", got)
	}
}

func TestValidateBIC(t *testing.T) {
	for _, ok := range []string{"DEUTDEFF", "DEUTDEFF500", "NWBKGB2L", "BNPAFRPP", "HDFCINBB", "CHASUS33", "EBILAEAD", "MHCBJPJT", "ABCDXK22"} {
		if err := ValidateBIC(ok); err != nil {
			t.Errorf("%s refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "DEUTDEF", "DEUTDEFF50", "DEUTDEFF5000", "deutdeff", "DEU1DEFF", "DEUTD3FF", "DEUTZZFF", "DEUTUKFF", "DEUTDEF!", "DEUTDEFF 50"} {
		if err := ValidateBIC(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestValidateABARouting(t *testing.T) {
	for _, ok := range []string{"026009593", "021000021", "011000015", "122105155", "322271627", "091000019"} {
		if err := ValidateABARouting(ok); err != nil {
			t.Errorf("%s refused: %v", ok, err)
		}
	}
	tests := []struct{ in, want string }{
		{"021000022", "checksum"},
		{"026009594", "checksum"},
		{"02600959", "9 digits"},
		{"0260095930", "9 digits"},
		{"02600959A", "9 digits"},
		{"", "9 digits"},
		{"500000005", "cannot start with 50"}, // checksum fine, range not
	}
	for _, tt := range tests {
		if err := ValidateABARouting(tt.in); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ValidateABARouting(%q) = %v, want %q", tt.in, err, tt.want)
		}
	}
}

func TestSameIBANFamily(t *testing.T) {
	for _, p := range [][2]string{{"DE", "DE"}, {"JE", "GB"}, {"GB", "JE"}, {"JE", "GG"}, {"RE", "FR"}, {"AX", "FI"}, {"US", "US"}} {
		if !sameIBANFamily(p[0], p[1]) {
			t.Errorf("%s and %s should agree", p[0], p[1])
		}
	}
	for _, p := range [][2]string{{"DE", "FR"}, {"US", "GB"}, {"JE", "FR"}, {"IN", "US"}} {
		if sameIBANFamily(p[0], p[1]) {
			t.Errorf("%s and %s should differ", p[0], p[1])
		}
	}
}

func FuzzValidateIBAN(f *testing.F) {
	for _, s := range validIBANs {
		f.Add(s)
	}
	f.Add("DE89370400440532013001")
	f.Add("GB00NWBK60161331926819")
	f.Add("")
	f.Add("ZZ\x00\xff")
	f.Fuzz(func(t *testing.T, s string) {
		checkAccepted(t, s)
		// Also with correct check digits, so that the fuzzer reaches the
		// structure checks and the accepting path, not only the checksum.
		if len(s) >= 5 && len(s) <= ibanLenMax && allBytes(s, isUpperAlnum) {
			if m, b := ibanMod97(s), bigMod97(s); int64(m) != b {
				t.Fatalf("ibanMod97(%q) = %d, math/big says %d", s, m, b)
			}
			checkAccepted(t, withCheckDigits(s[:2], s[4:]))
		}
	})
}

// checkAccepted validates s and, when it is accepted, checks that it is an
// electronic-format IBAN of registry length whose mod 97 is 1, computed
// independently.
func checkAccepted(t *testing.T, s string) {
	t.Helper()
	err := ValidateIBAN(s)
	if err != nil {
		if e := postings.AsError(err); e.Code != postings.EINVALID {
			t.Fatalf("ValidateIBAN(%q): code %s", s, e.Code)
		}
		return
	}
	spec, ok := ibanRegistry[s[:2]]
	if !ok || len(s) != spec.length {
		t.Fatalf("accepted %q of the wrong country or length", s)
	}
	for i := 0; i < len(s); i++ {
		if !isUpperAlnum(s[i]) {
			t.Fatalf("accepted %q with character %q", s, s[i])
		}
	}
	if m := bigMod97(s); m != 1 {
		t.Fatalf("accepted %q whose mod 97 is %d", s, m)
	}
}

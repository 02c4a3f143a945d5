package house

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
)

// formKey is the kind of a one-shot key a confirmation page puts in its
// form (a deposit, a key roll, a sanctions load): the kind's prefix and
// 128 random bits in lower-case hex. The POST accepts only a key of its
// own kind and form, so a key is checked before it reaches the ledger.
type formKey string

const (
	depositFormKey   formKey = "console-deposit-"
	rollFormKey      formKey = "console-roll-"
	sanctionsFormKey formKey = "console-sanctions-"
)

// formKeyHexLen is the length of a key's random part: 16 bytes in hex.
const formKeyHexLen = 32

// new makes a key of kind k.
func (k formKey) new() (string, error) {
	var b [formKeyHexLen / 2]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return string(k) + hex.EncodeToString(b[:]), nil
}

// valid says whether key is one k.new could have made.
func (k formKey) valid(key string) bool {
	rest, ok := strings.CutPrefix(key, string(k))
	if !ok || len(rest) != formKeyHexLen {
		return false
	}
	for i := 0; i < len(rest); i++ {
		if c := rest[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

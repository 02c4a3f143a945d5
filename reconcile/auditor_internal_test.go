package reconcile

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"testing"
)

// TestSCRAMVerifierAgainstRFC7677 checks the verifier with the exchange of
// RFC 7677, section 3 (user "user", password "pencil"): the server
// signature made from our ServerKey, and the client key recovered from the
// RFC's proof with our StoredKey, must be the RFC's.
func TestSCRAMVerifierAgainstRFC7677(t *testing.T) {
	t.Parallel()
	salt, _ := base64.StdEncoding.DecodeString("W22ZaJ0SNY7soEsUEjb6gQ==")
	v, err := scramVerifier("pencil", salt)
	if err != nil {
		t.Fatal(err)
	}
	prefix := "SCRAM-SHA-256$4096:W22ZaJ0SNY7soEsUEjb6gQ==$"
	if !strings.HasPrefix(v, prefix) {
		t.Fatalf("verifier %q, want the prefix %q", v, prefix)
	}
	keys := strings.Split(strings.TrimPrefix(v, prefix), ":")
	storedKey, _ := base64.StdEncoding.DecodeString(keys[0])
	serverKey, _ := base64.StdEncoding.DecodeString(keys[1])
	const nonce = "rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
	authMessage := "n=user,r=rOprNGfwEbeRWgbNEkqO," + "r=" + nonce + ",s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096," + "c=biws,r=" + nonce
	mac := func(key []byte) []byte {
		h := hmac.New(sha256.New, key)
		h.Write([]byte(authMessage))
		return h.Sum(nil)
	}
	if got := base64.StdEncoding.EncodeToString(mac(serverKey)); got != "6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=" {
		t.Errorf("server signature %s, want the RFC's", got)
	}
	proof, _ := base64.StdEncoding.DecodeString("dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=")
	clientSig := mac(storedKey)
	clientKey := make([]byte, len(proof))
	for i := range proof {
		clientKey[i] = proof[i] ^ clientSig[i]
	}
	if sum := sha256.Sum256(clientKey); !bytes.Equal(sum[:], storedKey) {
		t.Error("the RFC's client proof does not verify against the stored key")
	}
	// A random salt each time.
	a, _ := scramVerifier("pencil", nil)
	b, _ := scramVerifier("pencil", nil)
	if a == b {
		t.Error("two verifiers of one password are equal: the salt is not random")
	}
}

package httpserve

import "crypto/tls"

// tlsCipherSuites are the TLS 1.2 suites the gateway offers: ECDHE key
// exchange with an AEAD cipher only (AES-GCM, ChaCha20-Poly1305). No CBC
// suite (Lucky13 and padding-oracle attacks), no RSA key exchange (no
// forward secrecy). TLS 1.3 has only AEAD suites, and Go does not let them
// be configured. docs/security.md, "TLS".
var tlsCipherSuites = []uint16{
	tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
	tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
}

// TLSConfig is the server side of TLS for both listeners (the /shop API and
// the internal network API): TLS 1.2 or later, AEAD suites only, with certs.
func TLSConfig(certs ...tls.Certificate) *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS12,
		CipherSuites: append([]uint16(nil), tlsCipherSuites...),
		Certificates: certs,
	}
}

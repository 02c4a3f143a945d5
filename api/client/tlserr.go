package client

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
)

// isTLSVerification reports an error of the TLS handshake that the same
// request would meet again: the gateway's certificate is not trusted, has
// another name, has expired, or the peer does not speak TLS at all. Such a
// call is final, never retried: four attempts against a wrong certificate
// only delay the message that names it.
func isTLSVerification(err error) bool {
	var (
		verify   *tls.CertificateVerificationError
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
		record   tls.RecordHeaderError
	)
	return errors.As(err, &verify) || errors.As(err, &unknown) || errors.As(err, &hostname) ||
		errors.As(err, &invalid) || errors.As(err, &record)
}

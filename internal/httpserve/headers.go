package httpserve

import "net/http"

// HeaderBytes is the size of the request line and headers as an HTTP/1.1
// client sends them: "METHOD URI PROTO\r\n", "Host: …\r\n", one
// "Name: value\r\n" per value, and the blank line. api answers 431 past
// its bound; net/http's own (MaxHeaderBytes) is a backstop far above it.
func HeaderBytes(r *http.Request) int {
	n := len(r.Method) + 1 + len(r.RequestURI) + 1 + len(r.Proto) + 2
	n += len("Host: ") + len(r.Host) + 2
	for name, values := range r.Header {
		for _, v := range values {
			n += len(name) + 2 + len(v) + 2
		}
	}
	return n + 2
}

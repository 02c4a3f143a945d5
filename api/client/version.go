package client

// Version is this client's version (semantic versioning; CHANGELOG.md says
// what each changed). It is sent in the User-Agent of every request, so that
// the gateway's operators can tell which clients call them.
const Version = "1.2.0"

// Package views holds the answer shapes of the /shop surface: the JSON
// objects the handlers of package api write, and the constructors that map
// the domains' objects onto them (docs/api.md names every field). It is a
// leaf: it knows the domains' types and postings' money, never gin or api,
// so that a shape can be read, and tested, without the HTTP plumbing, and
// so that api stays a package of handlers (issue 28 point 1, the sizes).
package views

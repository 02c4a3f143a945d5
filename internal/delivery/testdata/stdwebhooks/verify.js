// Verifies captured gateway callbacks with the unmodified Standard Webhooks
// reference libraries (standardwebhooks and svix, pinned in package.json).
// Input on stdin: a JSON array of {headers, body, secret}; output on
// stdout: a JSON array of {standardwebhooks, svix}, each true when that
// library accepted the request, else the library's error message.
// Run by internal/delivery/stdwebhooks_node_test.go.
"use strict";
const { Webhook: StandardWebhook } = require("standardwebhooks");
const { Webhook: SvixWebhook } = require("svix");

function attempt(Lib, c) {
  try {
    new Lib(c.secret).verify(c.body, c.headers);
    return true;
  } catch (e) {
    return String(e && e.message ? e.message : e);
  }
}

let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (d) => (input += d));
process.stdin.on("end", () => {
  const cases = JSON.parse(input);
  const out = cases.map((c) => ({
    standardwebhooks: attempt(StandardWebhook, c),
    svix: attempt(SvixWebhook, c),
  }));
  process.stdout.write(JSON.stringify(out));
});

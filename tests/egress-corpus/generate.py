#!/usr/bin/python3
"""Generates the study-egress corpus (run from the repository root):

  tests/egress-corpus/policies.jsonl   destination policy documents
  tests/egress-corpus/events.jsonl     egress events judged against a policy
  tests/egress-corpus/manifests.jsonl  egress manifests

One JSON object per line. Every case carries its expected verdict:
  policies:  {"id", "expect": "accept"|"reject", "reason"?, "schema"?, "doc"|"raw"}
  events:    {"id", "policy", "event", "expect": "allow"|"deny", "reason", "class"?}
  manifests: {"id", "expect": "accept"|"reject", "reason"?, "completion"?, "schema"?,
              "doc"|"raw"}
"schema": "loader-only: WHY" marks a rule the JSON Schema cannot state.

The address expectations come from Python's ipaddress module over this
file's own copy of the range list (an implementation independent of the C
table in src/lib/egress/decision.c): for every range its first and last
address and the addresses just outside it, IPv4 also as IPv4-mapped IPv6.
"""
import copy
import hashlib
import ipaddress
import json
import os

OUT = os.path.join("tests", "egress-corpus")
SCHEMA = "agentguard.live-study-egress-policy"

# ---------------------------------------------------------------- ranges
# (cidr, class); first match wins, as in the contract notes.
RANGES = [
    ("0.0.0.0/32", "unspecified"), ("0.0.0.0/8", "reserved"), ("10.0.0.0/8", "private"),
    ("100.100.100.200/32", "metadata"), ("100.64.0.0/10", "cgnat"), ("127.0.0.0/8", "loopback"),
    ("169.254.169.254/32", "metadata"), ("169.254.170.2/32", "metadata"),
    ("169.254.0.0/16", "link-local"), ("172.17.0.0/16", "docker-internal"),
    ("172.18.0.0/15", "docker-internal"), ("172.20.0.0/14", "docker-internal"),
    ("172.24.0.0/13", "docker-internal"), ("172.16.0.0/12", "private"),
    ("192.0.0.0/24", "reserved"), ("192.0.2.0/24", "documentation"),
    ("192.88.99.0/24", "reserved"), ("192.168.0.0/16", "docker-internal"),
    ("198.18.0.0/15", "reserved"), ("198.51.100.0/24", "documentation"),
    ("203.0.113.0/24", "documentation"), ("224.0.0.0/4", "multicast"),
    ("255.255.255.255/32", "broadcast"), ("240.0.0.0/4", "reserved"),
    ("::/128", "unspecified"), ("::1/128", "loopback"), ("64:ff9b::/96", "translation"),
    ("64:ff9b:1::/48", "translation"), ("100::/64", "reserved"),
    ("2001:db8::/32", "documentation"), ("2001::/32", "translation"), ("2001::/23", "reserved"),
    ("2002::/16", "translation"), ("3fff::/20", "reserved"), ("fd00:ec2::254/128", "metadata"),
    ("fc00::/7", "private"), ("fe80::/10", "link-local"), ("fec0::/10", "reserved"),
    ("ff00::/8", "multicast"), ("2000::/3", "global"),
]
NETS = [(ipaddress.ip_network(c), k) for c, k in RANGES]


def classify(text):
    a = ipaddress.ip_address(text)
    if a.version == 6 and a.ipv4_mapped is not None:
        a = a.ipv4_mapped
    for n, k in NETS:
        if a.version == n.version and a in n:
            return k
    return "global" if a.version == 4 else "reserved"


def edges():
    seen = []
    for cidr, _ in RANGES:
        n = ipaddress.ip_network(cidr)
        cands = [n.network_address, n.broadcast_address]
        lo, hi = int(n.network_address), int(n.broadcast_address)
        top = 2 ** 32 - 1 if n.version == 4 else 2 ** 128 - 1
        if lo > 0:
            cands.append(ipaddress.ip_address(lo - 1) if n.version == 4 else ipaddress.IPv6Address(lo - 1))
        if hi < top:
            cands.append(ipaddress.ip_address(hi + 1) if n.version == 4 else ipaddress.IPv6Address(hi + 1))
        for a in cands:
            if str(a) not in seen:
                seen.append(str(a))
    return seen


def policy(*rules):
    return {"schema": SCHEMA, "schema_version": 1, "destinations": list(rules)}


def rule(host, port=443, **kw):
    r = {"host": host, "port": port}
    r.update(kw)
    return r


TEST = {"test_only": True, "test_only_ip_literal": True}
LOADER_ONLY = {
    "egress.policy.duplicate": "duplicates are judged after normalisation",
    "egress.policy.host_blocked": "blocked names are matched case-insensitively after trimming",
    "egress.policy.host_blocked_suffix": "blocked suffixes are matched after normalisation",
    "egress.policy.ip_literal_not_test_only": "an IP literal needs both test flags (cross-field)",
    "egress.policy.ip_literal_unsafe": "address ranges are not a pattern",
    "egress.host.numeric": "an all-digit last label is judged after parsing",
    "egress.host.ip_invalid": "IP literal syntax is judged by inet_pton",
    "egress.host.too_long": "the length bound applies after trimming",
}

# ---------------------------------------------------------------- policies
P = []


def pcase(id, expect, doc=None, reason=None, raw=None, schema=None):
    c = {"id": "p%03d-%s" % (len(P) + 1, id), "expect": expect}
    if reason:
        c["reason"] = reason
    if raw is not None:
        c["raw"] = raw
    else:
        c["doc"] = doc
    if schema is None and reason in LOADER_ONLY:
        schema = "loader-only: " + LOADER_ONLY[reason]
    if schema:
        c["schema"] = schema
    P.append(c)


# accepted documents
for h in ["api.example.com", "example.com", "a.b", "xn--bcher-kva.example", "a-b.example.org",
          "0a.example.net", "x1.y2.z3.example", "api.openai.example", "s3.eu-west-1.example.com",
          "very-long-label-" + "a" * 46 + ".example.com", "a" * 63 + ".com",
          ".".join(["a" * 49] * 5), "api.example.co.uk", "1.example.com", "example.com1"]:
    pcase("accept-host", "accept", policy(rule(h)))
for h in ["API.Example.COM", "  api.example.com", "api.example.com\t", "EXAMPLE.COM"]:
    pcase("accept-normalised", "accept", policy(rule(h)))
for port in [1, 80, 443, 8080, 65535]:
    pcase("accept-port", "accept", policy(rule("api.example.com", port)))
pcase("accept-empty", "accept", policy())
pcase("accept-purpose", "accept", policy(rule("api.example.com", purpose="model API (study)")))
pcase("accept-purpose-unicode", "accept", policy(rule("api.example.com", purpose="caf\u00e9 \u2014 \U0001f600 / \"q\" \\")))
pcase("accept-purpose-max", "accept", policy(rule("api.example.com", purpose="p" * 256)))
pcase("accept-purpose-max-chars", "accept", policy(rule("api.example.com", purpose="\u00e9" * 256)))
pcase("accept-test-only-name", "accept", policy(rule("canary.example.com", test_only=True)))
pcase("accept-flags-false", "accept",
      policy(rule("api.example.com", test_only=False, test_only_ip_literal=False)))
pcase("accept-two-ports", "accept", policy(rule("api.example.com", 443), rule("api.example.com", 8443)))
pcase("accept-64-rules", "accept", policy(*[rule("h%d.example.com" % i) for i in range(64)]))
for lit in ["192.0.2.1", "192.0.2.255", "198.51.100.7", "203.0.113.254", "[2001:db8::1]",
            "2001:db8::1", "[2001:DB8::A]", "93.184.216.34", "[2606:4700::1]", "192.0.2.0"]:
    pcase("accept-test-literal", "accept", policy(rule(lit, 8080, **TEST)))
pcase("accept-all-keys", "accept",
      policy(rule("api.example.com", 443, purpose="x", test_only=False, test_only_ip_literal=False)))

# refused hosts
BLOCKED = ["localhost", "localhost.localdomain", "host.docker.internal", "gateway.docker.internal",
           "docker.for.mac.localhost", "docker.for.mac.host.internal", "kubernetes.docker.internal",
           "metadata.google.internal"]
for h in BLOCKED:
    r = "egress.policy.host_blocked"
    if h in ("localhost",):
        r = "egress.host.single_label"
    pcase("blocked", "reject", policy(rule(h)), r)
    pcase("blocked-case", "reject", policy(rule(h.upper())), r)
pcase("blocked-metadata", "reject", policy(rule("metadata")), "egress.host.single_label")
for h in ["x.docker.internal", "a.b.docker.internal", "app.localhost", "A.LOCALHOST",
          "registry.docker.internal", "foo.localhost"]:
    pcase("blocked-suffix", "reject", policy(rule(h)), "egress.policy.host_blocked_suffix")
for h in ["*.example.com", "*", "api.*.com", "*example.com", "a*.example.com"]:
    pcase("wildcard", "reject", policy(rule(h)), "egress.host.wildcard")
for h in ["example.com.", "api.example.com.", "a.b."]:
    pcase("trailing-dot", "reject", policy(rule(h)), "egress.host.trailing_dot")
for ch in "/?=&#@ _!%+,;$'\"":
    pcase("char", "reject", policy(rule("api%sexample.com" % ch)), "egress.host.char")
pcase("char-bracket-open", "reject", policy(rule("api[.example.com")), "egress.host.char")
pcase("char-bracket-close", "reject", policy(rule("api].example.com")), "egress.host.char")
pcase("char-unicode", "reject", policy(rule("b\u00fccher.example")), "egress.host.char")
for ch in ["\u0000", "\u0001", "\n", "\u001f", "\u007f"]:
    r = "egress.policy.json" if ch == "\u0000" else "egress.host.control"
    pcase("control", "reject", policy(rule("api" + ch + "example.com")), r,
          schema="loader-only: a NUL in a JSON string is refused by the parser" if ch == "\u0000" else None)
pcase("empty", "reject", policy(rule("")), "egress.host.empty")
pcase("blank", "reject", policy(rule("   ")), "egress.host.empty")
pcase("too-long", "reject", policy(rule(".".join(["a" * 50] * 5) + ".com")), "egress.host.too_long")
pcase("label-64", "reject", policy(rule("a" * 64 + ".com")), "egress.host.label")
for h in ["-a.example.com", "a-.example.com", "a..example.com", ".example.com", "a.-b.com"]:
    pcase("label", "reject", policy(rule(h)), "egress.host.label")
for h in ["example", "intranet", "com"]:
    pcase("single-label", "reject", policy(rule(h)), "egress.host.single_label")
for h in ["1.2.3.04", "0x7f.1", "1.2.3", "example.123", "10.0.0.01", "1.2.3.4.5"]:
    pcase("numeric", "reject", policy(rule(h)), "egress.host.numeric")
for h in ["[::1", "[example.com]", "[192.0.2.1]", "2001:db8:::1", "[2001:db8::1%eth0]", "1:2"]:
    pcase("ip-invalid", "reject", policy(rule(h, **TEST)), "egress.host.ip_invalid")
# IP literals
for lit in ["192.0.2.1", "[2001:db8::1]", "93.184.216.34"]:
    pcase("literal-no-flags", "reject", policy(rule(lit)), "egress.policy.ip_literal_not_test_only")
    pcase("literal-test-only", "reject", policy(rule(lit, test_only=True)),
          "egress.policy.ip_literal_not_test_only")
    pcase("literal-flag-only", "reject", policy(rule(lit, test_only_ip_literal=True)),
          "egress.policy.ip_literal_not_test_only")
for lit in ["10.0.0.1", "127.0.0.1", "169.254.169.254", "169.254.1.1", "100.64.0.1", "172.17.0.1",
            "172.16.0.1", "192.168.1.1", "0.0.0.0", "224.0.0.1", "255.255.255.255", "240.0.0.1",
            "198.18.0.1", "100.100.100.200", "[::1]", "[::]", "[fd00:ec2::254]", "[fc00::1]",
            "[fe80::1]", "[ff02::1]", "[::ffff:127.0.0.1]", "[::ffff:10.0.0.1]", "[64:ff9b::a00:1]",
            "[2002:a00:1::]", "[2001::1]", "[fec0::1]", "[4000::1]", "[100::1]"]:
    pcase("literal-unsafe", "reject", policy(rule(lit, **TEST)), "egress.policy.ip_literal_unsafe")
pcase("literal-mapped-doc", "accept", policy(rule("[::ffff:192.0.2.1]", **TEST)))
# ports
for port in [0, 65536, -1, 100000]:
    pcase("port-range", "reject", policy(rule("api.example.com", port)), "egress.policy.port")
for port in ["443", 443.0, True, None, [443]]:
    pcase("port-type", "reject", policy(rule("api.example.com", port)), "egress.policy.port",
          schema="loader-only: JSON Schema's integer type accepts 443.0" if port == 443.0 else None)
# duplicates
for a, b in [("api.example.com", "API.EXAMPLE.COM"), ("api.example.com", " api.example.com "),
             ("[2001:db8::1]", "2001:db8:0::1"), ("192.0.2.1", "192.0.2.1"),
             ("Api.Example.Com", "aPI.eXAMPLE.cOM")]:
    kw = TEST if a[0] in "[1" else {}
    pcase("duplicate", "reject", policy(rule(a, **kw), rule(b, **kw)), "egress.policy.duplicate")
pcase("too-many", "reject", policy(*[rule("h%d.example.com" % i) for i in range(65)]),
      "egress.policy.too_many")
# structure
base = policy(rule("api.example.com"))
for k in ["extra", "Schema", "destination"]:
    d = copy.deepcopy(base)
    d[k] = 1
    pcase("unknown-top", "reject", d, "egress.policy.unknown_key")
for k in ["hostname", "ports", "wildcard", "Host", "proto"]:
    d = copy.deepcopy(base)
    d["destinations"][0][k] = "x"
    pcase("unknown-rule", "reject", d, "egress.policy.unknown_key")
for k in ["schema", "schema_version", "destinations"]:
    d = copy.deepcopy(base)
    del d[k]
    pcase("missing-top", "reject", d, "egress.policy.missing")
for k in ["host", "port"]:
    d = copy.deepcopy(base)
    del d["destinations"][0][k]
    pcase("missing-rule", "reject", d, "egress.policy.missing")
for s in ["agentguard.live-study-egress-policy-v2", "", "AGENTGUARD.LIVE-STUDY-EGRESS-POLICY", 1]:
    d = copy.deepcopy(base)
    d["schema"] = s
    pcase("schema", "reject", d, "egress.policy.schema")
for v in [2, 0, "1", 1.0, True]:
    d = copy.deepcopy(base)
    d["schema_version"] = v
    pcase("version", "reject", d, "egress.policy.version",
          schema="loader-only: JSON Schema's integer type accepts 1.0" if v == 1.0 else None)
for v in [{}, "api.example.com:443", None, 1]:
    d = copy.deepcopy(base)
    d["destinations"] = v
    pcase("destinations-type", "reject", d, "egress.policy.type")
for v in ["api.example.com:443", ["api.example.com", 443], None, 1]:
    pcase("rule-type", "reject", policy(v), "egress.policy.type")
for v in [1, None, ["a.example.com"], {"h": 1}]:
    pcase("host-type", "reject", policy({"host": v, "port": 443}), "egress.policy.type")
for v in ["", "p" * 257, "\u00e9" * 257, "a\nb", "a\u0000b", 1, None]:
    pcase("purpose", "reject", policy(rule("api.example.com", purpose=v)),
          "egress.policy.json" if v == "a\u0000b" else "egress.policy.purpose",
          schema="loader-only: a NUL in a JSON string is refused by the parser" if v == "a\u0000b" else None)
for k in ["test_only", "test_only_ip_literal"]:
    for v in ["true", 1, None]:
        pcase("flag-type", "reject", policy(rule("api.example.com", **{k: v})), "egress.policy.type")
for raw, why in [("", "empty"), ("{", "truncated"), ("[]", "array"), ("null", "null"),
                 ('{"schema":"%s","schema_version":1,"destinations":[],"schema":"x"}' % SCHEMA, "dup-key"),
                 ("{'schema': 1}", "single quotes"), ('{"a":1} {"b":2}', "two documents"),
                 ('{"schema":"%s","schema_version":1,"destinations":[{"host":"a.example.com","port":443,"port":444}]}' % SCHEMA,
                  "dup-rule-key")]:
    reason = "egress.policy.type" if why == "array" else "egress.policy.json"
    sch = None
    if "dup" in why:
        sch = "loader-only: Python's json keeps the last of two equal keys"
    pcase("raw-" + why.replace(" ", "-"), "reject", raw=raw, reason=reason, schema=sch)
pcase("size", "reject", policy(rule("api.example.com", purpose="x" * 200)) | {"pad": "y" * 70000},
      "egress.policy.size", schema="loader-only: the file-size bound precedes parsing")

# ---------------------------------------------------------------- events
E = []
POL = policy(rule("api.example.com", 443), rule("edge.example.com", 443),
             rule("canary.example.com", 8080, test_only=True), rule("192.0.2.10", 8080, **TEST),
             rule("[2001:db8::10]", 8443, **TEST), rule("dual.example.com", 443))


def ecase(id, event, expect, reason, pol=POL, cls=None):
    c = {"id": "e%03d-%s" % (len(E) + 1, id), "policy": pol, "event": event, "expect": expect,
         "reason": reason}
    if cls:
        c["class"] = cls
    E.append(c)


def conn(auth, addrs=("93.184.216.34",), status="stable", **kw):
    e = {"protocol": "connect", "authority": auth, "resolved_addresses": list(addrs),
         "resolution_status": status}
    e.update(kw)
    return e


# every range edge, IPv4 also as mapped IPv6
for a in edges():
    k = classify(a)
    ok = k == "global"
    ecase("edge-" + a, conn("edge.example.com:443", [a]), "allow" if ok else "deny",
          "approved_destination" if ok else "resolution_unsafe", cls=k)
    if ipaddress.ip_address(a).version == 4:
        m = "::ffff:" + a
        ecase("edge-mapped-" + a, conn("edge.example.com:443", [m]), "allow" if ok else "deny",
              "approved_destination" if ok else "resolution_unsafe", cls=k)
# documentation addresses: allowed only for a test-only rule
for a in ["192.0.2.1", "198.51.100.1", "203.0.113.1", "2001:db8::1", "::ffff:203.0.113.9"]:
    ecase("doc-test-rule", conn("canary.example.com:8080", [a]), "allow", "approved_destination",
          cls="documentation")
    ecase("doc-plain-rule", conn("api.example.com:443", [a]), "deny", "resolution_unsafe",
          cls="documentation")
for a in ["169.254.169.254", "fd00:ec2::254", "100.100.100.200", "169.254.170.2", "::ffff:169.254.169.254"]:
    ecase("metadata-test-rule", conn("canary.example.com:8080", [a]), "deny", "resolution_unsafe",
          cls="metadata")
# protocols
for p in ["udp", "quic", "dns", "unix"]:
    ecase("proto-" + p, {"protocol": p, "requested": {"host": "api.example.com", "port": 443}},
          "deny", p + "_blocked")
for p in ["ftp", "", "CONNECT", "websocket", "smtp"]:
    ecase("proto-other", conn("api.example.com:443", protocol=p) if False else
          {"protocol": p, "authority": "api.example.com:443"}, "deny", "unsupported_protocol")
ecase("proto-missing", {"authority": "api.example.com:443"}, "deny", "unsupported_protocol")
# CONNECT authority
ecase("connect-ok", conn("api.example.com:443"), "allow", "approved_destination")
ecase("connect-case", conn("API.EXAMPLE.COM:443"), "allow", "approved_destination")
for auth in ["api.example.com", "api.example.com:", "api.example.com:0", "api.example.com:65536",
             "api.example.com:0443", "api.example.com:+443", "api.example.com:443 ", " api.example.com:443",
             "api.example.com.:443", "*.example.com:443", "2001:db8::10:8443", "[2001:db8::10]8443",
             "user@api.example.com:443", "api.example.com:443/x", ":443", "api.example.com:44a",
             "api\u0001.example.com:443", "a" * 300 + ".com:443"]:
    ecase("authority-bad", conn(auth), "deny", "invalid_authority")
ecase("connect-with-url", conn("api.example.com:443", url="https://api.example.com/"), "deny",
      "invalid_authority")
ecase("connect-no-authority", {"protocol": "connect", "resolved_addresses": ["93.184.216.34"],
                               "resolution_status": "stable"}, "deny", "invalid_authority")
# URLs
def http(url, proto=None, addrs=("93.184.216.34",), **kw):
    e = {"protocol": proto or url.split(":")[0].lower(), "url": url,
         "resolved_addresses": list(addrs), "resolution_status": "stable"}
    e.update(kw)
    return e


ecase("url-https", http("https://api.example.com/v1/chat?key=SECRET#frag"), "allow", "approved_destination")
ecase("url-https-port", http("https://api.example.com:443/"), "allow", "approved_destination")
ecase("url-https-case", http("HTTPS://Api.Example.Com/x", proto="https"), "allow", "approved_destination")
ecase("url-http-default-80", http("http://api.example.com/"), "deny", "destination_not_approved")
ecase("url-http-443", http("http://api.example.com:443/"), "allow", "approved_destination")
ecase("url-https-8443", http("https://api.example.com:8443/"), "deny", "destination_not_approved")
for u in ["https://user@api.example.com/", "https://u:p@api.example.com/", "ftp://api.example.com/",
          "https:/api.example.com/", "https://", "https://api.example.com:0/", "//api.example.com/",
          "https://api.example.com/a b", "https://[2001:db8::10/", "api.example.com/"]:
    ecase("url-bad", http(u, proto="https"), "deny", "invalid_url")
ecase("url-scheme-mismatch", http("http://api.example.com:443/", proto="https"), "deny", "invalid_url")
ecase("url-with-authority", http("https://api.example.com/", authority="api.example.com:443"), "deny",
      "invalid_url")
# requested / effective agreement
ecase("requested-agrees", conn("api.example.com:443", requested={"host": "API.example.com", "port": 443}),
      "allow", "approved_destination")
ecase("requested-differs", conn("api.example.com:443", requested={"host": "evil.example.com", "port": 443}),
      "deny", "destination_mismatch")
ecase("effective-agrees", conn("api.example.com:443", effective={"host": "api.example.com", "port": 443}),
      "allow", "approved_destination")
ecase("effective-host", conn("api.example.com:443", effective={"host": "other.example.com", "port": 443}),
      "deny", "destination_mismatch")
ecase("effective-port", conn("api.example.com:443", effective={"host": "api.example.com", "port": 8443}),
      "deny", "destination_mismatch")
ecase("effective-ip", conn("api.example.com:443", effective={"host": "93.184.216.34", "port": 443}),
      "deny", "destination_mismatch")
# tcp with requested fields
ecase("tcp-ok", {"protocol": "tcp", "requested": {"host": "api.example.com", "port": 443},
                 "resolved_addresses": ["93.184.216.34"], "resolution_status": "stable"},
      "allow", "approved_destination")
ecase("tcp-missing", {"protocol": "tcp", "resolved_addresses": ["93.184.216.34"],
                      "resolution_status": "stable"}, "deny", "invalid_authority")
ecase("tcp-port-0", {"protocol": "tcp", "requested": {"host": "api.example.com", "port": 0}},
      "deny", "invalid_authority")
# destination rules
ecase("not-approved-host", conn("evil.example.com:443"), "deny", "destination_not_approved")
ecase("not-approved-port", conn("api.example.com:8443"), "deny", "destination_not_approved")
ecase("not-approved-suffix", conn("x.api.example.com:443"), "deny", "destination_not_approved")
ecase("not-approved-registry", conn("registry.npmjs.org:443"), "deny", "destination_not_approved")
ecase("localhost-name", conn("localhost.localdomain:443"), "deny", "destination_not_approved")
# IP literals
ecase("literal-unapproved", conn("93.184.216.34:443"), "deny", "ip_literal_not_approved")
ecase("literal-metadata", conn("169.254.169.254:80"), "deny", "ip_literal_not_approved")
ecase("literal-v6-unapproved", conn("[2606:4700::1]:443"), "deny", "ip_literal_not_approved")
ecase("literal-approved", conn("192.0.2.10:8080", []), "allow", "approved_destination")
ecase("literal-approved-v6", conn("[2001:db8::10]:8443", []), "allow", "approved_destination")
ecase("literal-approved-v6-long", conn("[2001:0db8:0:0::10]:8443", []), "allow", "approved_destination")
ecase("literal-wrong-port", conn("192.0.2.10:443", []), "deny", "ip_literal_not_approved")
ecase("literal-mapped-v6", conn("[::ffff:192.0.2.10]:8080", []), "deny", "ip_literal_not_approved")
ecase("literal-url", http("http://192.0.2.10:8080/x"), "allow", "approved_destination")
# resolution
for st in ["changed", "timeout", "", "STABLE", "unknown"]:
    ecase("status-" + (st or "empty"), conn("api.example.com:443", status=st), "deny", "resolution_uncertain")
ecase("status-missing", {"protocol": "connect", "authority": "api.example.com:443",
                         "resolved_addresses": ["93.184.216.34"]}, "deny", "resolution_uncertain")
ecase("resolution-none", conn("api.example.com:443", []), "deny", "resolution_missing")
ecase("resolution-nine", conn("api.example.com:443", ["93.184.216.34"] * 9), "deny", "resolution_ambiguous")
ecase("resolution-eight-same", conn("api.example.com:443", ["93.184.216.34"] * 8), "allow", "approved_destination")
ecase("resolution-two", conn("api.example.com:443", ["93.184.216.34", "93.184.216.35"]), "deny",
      "resolution_ambiguous")
ecase("resolution-a-aaaa", conn("dual.example.com:443", ["93.184.216.34", "2606:2800:220:1::1"]), "deny",
      "resolution_ambiguous")
ecase("resolution-mapped-same", conn("api.example.com:443", ["93.184.216.34", "::ffff:93.184.216.34"]),
      "allow", "approved_destination")
ecase("resolution-one-unsafe", conn("api.example.com:443", ["93.184.216.34", "10.0.0.1"]), "deny",
      "resolution_ambiguous")
ecase("resolution-v6-forms", conn("api.example.com:443", ["2606:2800:220:1::1", "2606:2800:0220:0001:0:0:0:1"]),
      "allow", "approved_destination")
for bad in ["not-an-ip", "93.184.216.034", "1.2.3", "[2001:db8::1]", "93.184.216.34:443", ""]:
    ecase("resolution-invalid", conn("api.example.com:443", [bad]), "deny", "resolution_invalid")
ecase("rebinding", conn("api.example.com:443", ["127.0.0.1"]), "deny", "resolution_unsafe", cls="loopback")
ecase("empty-policy", conn("api.example.com:443"), "deny", "destination_not_approved", pol=policy())

# ---------------------------------------------------------------- manifests
M = []
H = lambda s: hashlib.sha256(s.encode()).hexdigest()
MPOL = policy(rule("api.example.com", 443))


def norm_digest(pol):
    rules = sorted(({"host": r["host"], "port": r["port"], "purpose": r.get("purpose", "approved-destination"),
                     "test_only": r.get("test_only", False),
                     "test_only_ip_literal": r.get("test_only_ip_literal", False)}
                    for r in pol["destinations"]), key=lambda r: (r["host"], r["port"]))
    doc = {"schema": SCHEMA, "schema_version": 1, "destinations": rules}
    return hashlib.sha256(json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def event(**kw):
    e = {"event_type": "request", "protocol": "connect", "route": None,
         "requested": {"host": "api.example.com", "port": 443},
         "effective": {"host": "api.example.com", "port": 443},
         "url": None, "resolved_addresses": ["93.184.216.34"], "resolution_status": "stable",
         "decision": "allow", "reason": "approved_destination", "bytes": {"in": 5120, "out": 830},
         "timestamps": {"start": "2026-11-30T13:00:00Z", "end": "2026-11-30T13:00:01.250Z"},
         "evidence_complete": True, "evidence_truncated": False}
    e.update(kw)
    return e


def manifest(**kw):
    m = {"schema": "agentguard.live-study-egress-manifest", "schema_version": 1,
         "plan_digest": H("plan"), "profile_hash": H("profile"), "fixture_hash": H("fixture"),
         "trial_id": "trial-001", "authorization_id": "auth-2026-11-30",
         "egress_policy_digest": norm_digest(MPOL),
         "approved_destination": {"host": "api.example.com", "port": 443},
         "gateway_image_identity": {
             "configured_reference": "127.0.0.1:5000/gw@sha256:" + H("gw"),
             "registry_digest": "127.0.0.1:5000/gw@sha256:" + H("gw"),
             "local_image_id": "sha256:" + H("id"), "container_bound_image_id": "sha256:" + H("id"),
             "platform": "linux/amd64", "pull_policy": "never", "cache_status": "present"},
         "events": [event()],
         "gateway_status": {"state": "running", "evidence_complete": True, "evidence_truncated": False},
         "cleanup_status": {"agent": "removed", "gateway": "removed", "internal_network": "removed",
                            "outbound_network": "removed", "overall_complete": True},
         "liveness_status": {"verified": True},
         "completion": {"status": "complete", "reason": "complete", "success_eligible": True}}
    m.update(kw)
    return m


def mcase(id, expect, doc=None, reason=None, completion=None, raw=None, schema=None):
    c = {"id": "m%03d-%s" % (len(M) + 1, id), "expect": expect}
    if reason:
        c["reason"] = reason
    if completion:
        c["completion"] = completion
    if raw is not None:
        c["raw"] = raw
    else:
        c["doc"] = doc
    if schema:
        c["schema"] = schema
    M.append(c)


def akey(decision="allow", host="api.example.com", port=443, reason="approved_destination", n=5000):
    return {"decision": decision, "host": host, "port": port, "reason": reason, "requests": n,
            "bytes_in": 10, "bytes_out": 20}


def aggs(keys, ov_allowed=0, ov_denied=0, complete=True, sampled_out=12):
    return {"keys": keys, "overflow": {"requests_allowed": ov_allowed, "requests_denied": ov_denied,
                                       "bytes_in": 0, "bytes_out": 0},
            "complete": complete, "sampled_out": sampled_out}


def stated(status, reason):
    return {"status": status, "reason": reason, "success_eligible": status == "complete"}


mcase("complete", "accept", manifest(), completion="complete")
mcase("complete-no-events", "accept", manifest(events=[]), completion="complete")
mcase("complete-two-events", "accept", manifest(events=[event(), event(event_type="redirect",
      url="https://api.example.com/v2")]), completion="complete")
# each completion rule, violated one at a time: claimed complete -> refused;
# stated honestly -> accepted with that completion
VIOL = [
    ("identity-missing", dict(gateway_image_identity=None), "incomplete", "gateway_identity_missing"),
    ("identity-unbound", dict(gateway_image_identity=dict(manifest()["gateway_image_identity"],
                                                         container_bound_image_id=None)),
     "incomplete", "gateway_identity_missing"),
    ("identity-mismatch", dict(gateway_image_identity=dict(manifest()["gateway_image_identity"],
                                                          container_bound_image_id="sha256:" + H("other"))),
     "incomplete", "gateway_identity_missing"),
    ("gateway-crashed", dict(gateway_status={"state": "crashed", "evidence_complete": True,
                                             "evidence_truncated": False}), "failed", "gateway_crashed"),
    ("gateway-exited", dict(gateway_status={"state": "exited", "evidence_complete": True,
                                            "evidence_truncated": False}), "incomplete", "gateway_not_running"),
    ("gateway-evidence-lost", dict(gateway_status={"state": "running", "evidence_complete": False,
                                                   "evidence_truncated": False}),
     "incomplete", "gateway_evidence_incomplete"),
    ("gateway-evidence-truncated", dict(gateway_status={"state": "running", "evidence_complete": True,
                                                        "evidence_truncated": True}),
     "incomplete", "gateway_evidence_incomplete"),
    ("cleanup-failed", dict(cleanup_status={"agent": "removed", "gateway": "incomplete",
                                            "internal_network": "removed", "outbound_network": "removed",
                                            "overall_complete": False}), "incomplete", "cleanup_incomplete"),
    ("cleanup-contradictory", dict(cleanup_status={"agent": "removed", "gateway": "removed",
                                                   "internal_network": "incomplete",
                                                   "outbound_network": "removed", "overall_complete": True}),
     "incomplete", "cleanup_incomplete"),
    ("liveness-unverified", dict(liveness_status={"verified": False}), "incomplete", "liveness_unverified"),
    ("event-evidence-lost", dict(events=[event(evidence_complete=False)]), "incomplete",
     "event_evidence_incomplete"),
    ("event-truncated", dict(events=[event(evidence_truncated=True)]), "incomplete", "event_evidence_incomplete"),
    ("event-allow-deny-reason", dict(events=[event(reason="destination_not_approved")]), "incomplete",
     "event_contradictory"),
    ("event-deny-allow-reason", dict(events=[event(decision="deny")]), "incomplete", "event_contradictory"),
    ("event-ambiguous-resolution", dict(events=[event(resolved_addresses=["93.184.216.34", "93.184.216.35"])]),
     "incomplete", "event_contradictory"),
    ("event-uncertain-resolution", dict(events=[event(resolution_status="changed")]), "incomplete",
     "event_contradictory"),
    ("event-effective-differs", dict(events=[event(effective={"host": "evil.example.com", "port": 443})]),
     "incomplete", "event_contradictory"),
    ("event-decision-unknown", dict(events=[event(decision="maybe")]), "incomplete", "decision_unknown"),
    ("event-denied", dict(events=[event(), event(decision="deny", reason="destination_not_approved",
                                                  requested={"host": "evil.example.com", "port": 443},
                                                  effective={"host": "evil.example.com", "port": 443})]),
     "failed", "destination_denied"),
    ("blocked-route", dict(events=[event(event_type="blocked_route", protocol="udp", route="quic",
                                         decision="deny", reason="udp_blocked",
                                         requested={"host": None, "port": None},
                                         effective={"host": None, "port": None}, resolved_addresses=[],
                                         resolution_status="unknown")]), "failed", "destination_denied"),
    ("unexpected-destination", dict(events=[event(requested={"host": "other.example.com", "port": 443},
                                                  effective={"host": "other.example.com", "port": 443})]),
     "failed", "unexpected_destination"),
    # the aggregates (issue 19): a deny or an unexpected destination the
    # sample of events does not show still decides the trial
    ("aggregates-deny", dict(aggregates=aggs([akey(), akey("deny", "junk.example", 80,
                                                           "destination_not_approved")])),
     "failed", "destination_denied"),
    ("aggregates-deny-then-crash", dict(aggregates=aggs([akey("deny", "junk.example", 80,
                                                              "destination_not_approved")]),
                                        gateway_status={"state": "crashed", "evidence_complete": False,
                                                        "evidence_truncated": False}),
     "failed", "destination_denied"),
    ("aggregates-overflow-deny", dict(aggregates=aggs([akey()], ov_denied=3)),
     "failed", "destination_denied"),
    ("aggregates-unexpected", dict(aggregates=aggs([akey(host="other.example.com")])),
     "failed", "unexpected_destination"),
    ("aggregates-overflow-allow", dict(aggregates=aggs([akey()], ov_allowed=1)),
     "incomplete", "gateway_evidence_incomplete"),
    ("aggregates-not-complete", dict(aggregates=aggs([akey()], complete=False)),
     "incomplete", "gateway_evidence_incomplete"),
]
for id, change, status, reason in VIOL:
    mcase("claims-complete-" + id, "reject", manifest(**change), "egress.manifest.completion_mismatch",
          schema="loader-only: completion is recomputed from the contents")
    mcase("honest-" + id, "accept", manifest(completion=stated(status, reason), **change), completion=status)
mcase("events-not-list", "reject", manifest(events={"a": 1}), "egress.manifest.type")
mcase("aggregates-complete", "accept", manifest(aggregates=aggs([akey()])), completion="complete")
mcase("aggregates-key-reason", "reject", manifest(aggregates=aggs([akey(reason="made_up")])),
      "egress.manifest.event", schema="loader-only: the validator checks the word")
mcase("aggregates-key-zero", "reject", manifest(aggregates=aggs([akey(n=0)])), "egress.manifest.event")
mcase("aggregates-key-missing", "reject",
      manifest(aggregates=aggs([{k: v for k, v in akey().items() if k != "bytes_in"}])),
      "egress.manifest.missing")
mcase("aggregates-keys-bound", "reject", manifest(aggregates=aggs([akey(port=p) for p in range(1, 130)])),
      "egress.manifest.list")
mcase("aggregates-unknown-key", "reject", manifest(aggregates=dict(aggs([akey()]), extra=1)),
      "egress.manifest.unknown_key")
# sanitization
for id, s, r in [("query-url", "https://api.example.com/v1?key=abc", "egress.manifest.query"),
                 ("query-bare", "?token=abc", "egress.manifest.query"),
                 ("fragment-url", "https://api.example.com/v1#frag", "egress.manifest.query"),
                 ("path-home", "/home/alice/project", "egress.manifest.private_path"),
                 ("path-tmp", "/tmp/agentguard-x", "egress.manifest.private_path"),
                 ("path-root", "/root/.ssh/id", "egress.manifest.private_path"),
                 ("path-users", "/Users/bob/x", "egress.manifest.private_path")]:
    mcase("sanitize-" + id, "reject", manifest(events=[event(url=s)]), r,
          schema="loader-only: sanitization applies to every string")
mcase("sanitize-in-identity", "reject", manifest(gateway_image_identity=dict(
    manifest()["gateway_image_identity"], platform="/home/alice")), "egress.manifest.private_path",
    schema="loader-only: sanitization applies to every string")
mcase("sanitized-url-ok", "accept", manifest(events=[event(url="https://api.example.com/v1")]),
      completion="complete")
# bounds
mcase("bound-string", "reject", manifest(authorization_id="a" * 513), "egress.manifest.string",
      schema="loader-only: the 512-byte bound applies to every string")
mcase("bound-string-event", "reject", manifest(events=[event(protocol="p" * 600)]), "egress.manifest.string",
      schema="loader-only: the 512-byte bound applies to every string")
mcase("bound-list", "reject", manifest(events=[event(resolved_addresses=["1.1.1.1"] * 257)]),
      "egress.manifest.list",
      schema="loader-only: the list bound precedes the field checks")
mcase("bound-keys", "reject", manifest(gateway_image_identity=dict(
    {"k%d" % i: "v" for i in range(97)})), "egress.manifest.keys",
    schema="loader-only: the key bound precedes the field checks")
deep = {"a": {"b": {"c": {"d": {"e": {"f": {"g": {"h": 1}}}}}}}}
mcase("bound-depth", "reject", manifest(gateway_image_identity=deep), "egress.manifest.depth",
      schema="loader-only: the depth bound precedes the field checks")
mcase("bound-bytes", "reject", manifest(events=[event(protocol="p" * 1500) for _ in range(250)]),
      "egress.manifest.size", schema="loader-only: the size bound precedes parsing")
mcase("bound-number", "reject", manifest(events=[event(bytes={"in": 10 ** 12 + 1, "out": 0})]),
      "egress.manifest.number")
mcase("bound-float", "reject", manifest(events=[event(bytes={"in": 1.5, "out": 0})]), "egress.manifest.number")
mcase("bound-resolved", "reject", manifest(events=[event(resolved_addresses=["93.184.216.34"] * 9)]),
      "egress.manifest.event")
# fields
for k in ["plan_digest", "profile_hash", "fixture_hash", "egress_policy_digest"]:
    mcase("hash-" + k, "reject", manifest(**{k: "ABC"}), "egress.manifest.hash")
    mcase("hash-upper-" + k, "reject", manifest(**{k: H("x").upper()}), "egress.manifest.hash")
for k in ["trial_id", "authorization_id"]:
    mcase("id-" + k, "reject", manifest(**{k: "-bad id"}), "egress.manifest.id")
for k in ["plan_digest", "events", "completion", "gateway_status", "trial_id"]:
    d = manifest()
    del d[k]
    mcase("missing-" + k, "reject", d, "egress.manifest.missing")
mcase("unknown-top", "reject", manifest(extra=1), "egress.manifest.unknown_key")
mcase("unknown-event-key", "reject", manifest(events=[event(headers={})]), "egress.manifest.unknown_key")
mcase("schema", "reject", manifest(schema="agentguard.other"), "egress.manifest.schema")
mcase("version", "reject", manifest(schema_version=2), "egress.manifest.version")
mcase("state-enum", "reject", manifest(gateway_status={"state": "RUNNING", "evidence_complete": True,
                                                       "evidence_truncated": False}), "egress.manifest.status")
mcase("completion-enum", "reject", manifest(completion=stated("passed", "x")), "egress.manifest.status")
mcase("identity-digest", "reject", manifest(gateway_image_identity=dict(
    manifest()["gateway_image_identity"], registry_digest="gw:latest")), "egress.manifest.identity",
    schema="loader-only: the digest suffix is checked after the type")
mcase("event-host-not-normalised", "reject", manifest(events=[event(requested={"host": "API.example.com", "port": 443})]),
      "egress.manifest.event", schema="loader-only: host normalisation")
mcase("event-timestamp", "reject", manifest(events=[event(timestamps={"start": "yesterday", "end": "now"})]),
      "egress.manifest.event")
mcase("event-address", "reject", manifest(events=[event(resolved_addresses=["not-an-ip"])]),
      "egress.manifest.event", schema="loader-only: address syntax")
mcase("event-type-enum", "reject", manifest(events=[event(event_type="other")]), "egress.manifest.status")
mcase("raw-not-json", "reject", raw="{", reason="egress.manifest.json")
mcase("raw-dup-key", "reject", raw=json.dumps(manifest())[:-1] + ', "trial_id": "x"}',
      reason="egress.manifest.json", schema="loader-only: Python's json keeps the last of two equal keys")
# an event's reason is a closed vocabulary: decision reasons, the gateway's
# own refusal words (src/lib/egress/request.h), "unknown"
GW_DENY = dict(decision="deny", resolved_addresses=[], resolution_status="unknown")
for word in ["request_smuggling", "request_malformed", "request_oversized", "request_slow",
             "request_unsupported", "request_incomplete", "connection_limit", "evidence_lost",
             "gateway_error"]:
    mcase("gateway-refusal-" + word.replace("_", "-"), "accept",
          manifest(events=[event(reason=word, **GW_DENY)],
                   completion=stated("failed", "destination_denied")), completion="failed")
mcase("event-reason-enum", "reject", manifest(events=[event(reason="made_up_reason", **GW_DENY)],
                                               completion=stated("failed", "destination_denied")),
      "egress.manifest.status")
mcase("event-reason-detail-word", "reject",
      manifest(events=[event(reason="header_name_whitespace", **GW_DENY)],
               completion=stated("failed", "destination_denied")), "egress.manifest.status")


def write(name, cases):
    with open(os.path.join(OUT, name), "w") as f:
        for c in cases:
            f.write(json.dumps(c, sort_keys=True, ensure_ascii=True) + "\n")


write("policies.jsonl", P)
write("events.jsonl", E)
write("manifests.jsonl", M)
print("policies %d, events %d, manifests %d" % (len(P), len(E), len(M)))

#!/usr/bin/env python3
"""etcd's access control for the loopback cluster, run by cluster.sh once etcd answers.

Usage: etcd-auth.py health|setup <etcd URL> <secrets folder> <Patroni's namespace, e.g. /works-api/> <leader key>

etcd only accepts TLS connections from clients holding a certificate signed by the cluster's CA (--client-cert-auth);
with authentication on, the certificate's common name is the user, so no password is checked per request (a v2
password is a bcrypt hash, tens of milliseconds of CPU per request, which starves etcd on a busy machine).

- v2 API (Patroni's `etcd:`): `root` administers; `patroni` reads and writes under Patroni's namespace and nowhere
  else; `haproxy` reads the leader key and nothing else; anonymous (`guest`) nothing.
- v3 API, which nothing here uses: the root user alone, so that no other certificate holder writes keys or changes
  the membership through it.

Once authentication is on, setup does nothing (it is safe to run at every start). The users' passwords are random
and thrown away: they log in with their certificates. Every request uses the `root` certificate.
"""
import json
import secrets
import ssl
import sys
import urllib.request

command, url, folder, namespace, leader_key = sys.argv[1:6]
context = ssl.create_default_context(cafile=f"{folder}/tls/ca.crt")
context.load_cert_chain(f"{folder}/tls/root.crt", f"{folder}/tls/root.key")


def call(method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url + path, method=method, data=data,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10, context=context) as response:
        return json.loads(response.read() or b"{}")


if command == "health":
    sys.exit(0 if call("GET", "/health").get("health") == "true" else 1)

if call("GET", "/v2/auth/enable").get("enabled"):
    sys.exit(0)


def throwaway():
    return secrets.token_urlsafe(24)


call("POST", "/v3/auth/user/add", {"name": "root", "password": throwaway()})
call("POST", "/v3/auth/role/add", {"name": "root"})
call("POST", "/v3/auth/user/grant", {"user": "root", "role": "root"})
call("POST", "/v3/auth/enable", {})

call("PUT", "/v2/auth/users/root", {"user": "root", "password": throwaway()})
call("PUT", "/v2/auth/roles/patroni",
     {"role": "patroni", "permissions": {"kv": {"read": [namespace + "*"], "write": [namespace + "*"]}}})
call("PUT", "/v2/auth/users/patroni", {"user": "patroni", "password": throwaway(), "roles": ["patroni"]})
call("PUT", "/v2/auth/roles/leader-reader",
     {"role": "leader-reader", "permissions": {"kv": {"read": [leader_key], "write": []}}})
call("PUT", "/v2/auth/users/haproxy", {"user": "haproxy", "password": throwaway(), "roles": ["leader-reader"]})
call("PUT", "/v2/auth/enable")
call("PUT", "/v2/auth/roles/guest", {"role": "guest", "revoke": {"kv": {"read": ["/*"], "write": ["/*"]}}})

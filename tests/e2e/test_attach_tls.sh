#!/bin/sh
# Attach mode's listen address takes bearer tokens (the placement map's
# /ui/api/placement), so it serves TLS when given a certificate, as the
# shipped Deployment does: /healthz answers over https with the CA, a plain
# http request gets no answer, TLS 1.1 is refused, and a missing key file
# is a startup error naming the file.
set -eu
. "$PODKERNEL_SRC/tests/e2e/lib.sh"
. "$PODKERNEL_SRC/tests/e2e/attach_lib.sh"
need_tool curl openssl
trap 'attach_dump' USR1

e2e_setup
attach_cluster_start
# the stand-in's self-signed certificate (IP 127.0.0.1) serves the health port too
attach_start a --tls-cert-file "$WORK/cert.pem" --tls-private-key-file "$WORK/key.pem"
HP=$ATTACH_PORT_a
grep -q "serving health on https://" "$WORK/attach-a.log" || { attach_dump; fail "the health port does not say https"; }
wait_for 20 curl -sf --cacert "$WORK/cert.pem" "https://127.0.0.1:$HP/readyz" ||
	{ attach_dump; fail "/readyz over https"; }
[ "$(curl -s --cacert "$WORK/cert.pem" "https://127.0.0.1:$HP/healthz")" = ok ] || fail "/healthz over https"
if curl -s -m 5 -o /dev/null "http://127.0.0.1:$HP/healthz"; then
	fail "the TLS health port answered plain http"
fi
if echo | openssl s_client -connect "127.0.0.1:$HP" -tls1_1 > "$WORK/s_client.out" 2>&1; then
	fail "TLS 1.1 was negotiated on the health port"
fi

# a missing key: exit 2 before serving, naming the file
if "$BIN/podkerneld" --kubeconfig "$WORK/attach.kubeconfig" --listen 127.0.0.1:0 \
	--tls-cert-file "$WORK/cert.pem" --tls-private-key-file "$WORK/nosuch.key" > "$WORK/bad.log" 2>&1; then
	fail "a missing key file was accepted"
fi
grep -q "nosuch.key" "$WORK/bad.log" || { cat "$WORK/bad.log"; fail "the error does not name the key file"; }
echo "attach TLS: /healthz over https, plain http and TLS 1.1 refused"

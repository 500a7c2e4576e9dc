#!/bin/sh
# A throwaway certificate authority and a certificate for localhost and 127.0.0.1 signed by it, for
# examples/tls/svc.yaml. Written beside this script (or into the directory given as the first
# argument): ca.pem (trust it: curl --cacert, NODE_EXTRA_CA_CERTS), ca-key.pem, localhost.pem and
# localhost-key.pem. For trying TLS out only: the CA's key lies beside it, unprotected.
set -eu
dir="${1:-$(dirname "$0")}"
mkdir -p "$dir"
cd "$dir"
ext=$(mktemp)
trap 'rm -f "$ext" localhost.csr' EXIT

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 \
  -subj '/CN=svc example CA' \
  -addext 'basicConstraints=critical,CA:TRUE' -addext 'keyUsage=critical,keyCertSign,cRLSign' \
  -keyout ca-key.pem -out ca.pem 2>/dev/null

openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj '/CN=localhost' \
  -keyout localhost-key.pem -out localhost.csr 2>/dev/null
printf '%s\n' 'subjectAltName=DNS:localhost,IP:127.0.0.1' 'basicConstraints=CA:FALSE' \
  'keyUsage=critical,digitalSignature' 'extendedKeyUsage=serverAuth' > "$ext"
openssl x509 -req -in localhost.csr -CA ca.pem -CAkey ca-key.pem -set_serial "0x$(openssl rand -hex 8)" \
  -days 30 -extfile "$ext" -out localhost.pem 2>/dev/null

chmod 600 ca-key.pem localhost-key.pem
echo "wrote $(pwd)/ca.pem and $(pwd)/localhost.pem (localhost, 127.0.0.1; valid 30 days)"

#ifndef ROOST_CLIBSSL_SHIM_H
#define ROOST_CLIBSSL_SHIM_H

// OpenSSL's libssl, for the SDK's TLS client (wss://). The server does not link it: it uses COpenSSL (libcrypto).
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>

// Function macros Swift cannot call.
static inline int roost_SSL_CTX_set_min_proto_version(SSL_CTX *context, int version) {
    return (int)SSL_CTX_set_min_proto_version(context, version);
}

static inline int roost_SSL_set_tlsext_host_name(SSL *ssl, const char *name) {
    return (int)SSL_set_tlsext_host_name(ssl, name);
}

#endif

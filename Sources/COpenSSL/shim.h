#ifndef ROOST_COPENSSL_SHIM_H
#define ROOST_COPENSSL_SHIM_H

#include <openssl/rand.h>
#include <openssl/evp.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/sha.h>
#include <openssl/hmac.h>

#endif

#ifndef CCRYPTO_SHIM_H
#define CCRYPTO_SHIM_H
// OpenSSL's libcrypto (Debian's libssl-dev): the EVP digest interface, which picks the
// hardware SHA extensions or the best vector code the CPU has at run time, HMAC for the
// S3 remote's request signatures (AWS Signature Version 4), and the PEM reader that checks a
// remote's certificate authority file (--ca-file) holds certificates.
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
// The encrypted vault (Sources/DocumentSync/Vault): AES-SIV, AES-GCM and AES key wrap through
// EVP, CMAC for the one AES-SIV input OpenSSL 3.0 refuses, scrypt, random bytes, and
// OPENSSL_cleanse and CRYPTO_memcmp for key material.
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/kdf.h>
#include <openssl/params.h>
#include <openssl/rand.h>
#endif
